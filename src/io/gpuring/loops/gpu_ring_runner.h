// GpuRingRunner: the one GPU runner of the ring loops (ring_loops.h, ring_batch_loops.h,
// forward_loops.h): a persistent kernel on its own non-blocking stream, loaded before launch and
// checked to fit on the GPU at once. request_stop() sets the mapped stop flag and the kernel
// drains and exits; destroyed while running, it stops the kernel, waits, and aborts it if the
// drain does not end (persistent_kernel.cuh). The families differ only in the kernel launched:
// the ring pairs (gpu_ring_kernels.cuh, with the per-packet hook the caller compiles in), the
// batch loops (gpu_ring_batch_runner.h) and the forwarding loops (gpu_forward_kernels.cuh).
//
// Errors: GpuError when a launch fails or a kernel faults; std::runtime_error in a build
// without CUDA or when the blocks cannot all be resident; std::invalid_argument for rings not
// in device memory; wait() returns false if the kernel has not exited within the timeout.
#pragma once

namespace gpunfv::gpuring {

class GpuRingRunner {
 public:
  virtual ~GpuRingRunner() = default;
  virtual void request_stop() = 0;
  // Waits until every block has exited; false on timeout (the kernel is then still running).
  virtual bool wait(double timeout_s) = 0;
};

}  // namespace gpunfv::gpuring
