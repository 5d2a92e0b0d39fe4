// The persistent batch-mode kernel of the GPU ring port (see gpu_ring_batch_runner.h).
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/stream.h"
#include "io/gpuring/loops/persistent_kernel.cuh"
#include "io/gpuring/loops/gpu_ring_batch_runner.h"
#include "io/gpuring/loops/internal/ring_batch_loops.h"

namespace gpunfv::gpuring {

namespace {

constexpr unsigned kThreads = 32;  // exactly one warp: every lane takes part in the team's calls

// Blocks [0, rings) run the tx loops, [rings, 2 rings) the rx loops (one kernel, as
// gpu_ring_kernels.cuh explains). Each block is one warp, a Team (team.h): lane 0 runs the
// protocol, the lanes write (rx) or read (tx) a batch's per-packet metadata a warp's worth at once.
__global__ void ring_batch_kernel(RingSetView v, RingBatchView bv, uint16_t port_id) {
  if (blockIdx.x < v.p.rings)
    tx_batch_loop(v, bv, blockIdx.x, WarpTeam{});
  else
    rx_batch_loop(v, bv, blockIdx.x - v.p.rings, port_id, WarpTeam{});
}

}  // namespace

std::unique_ptr<GpuRingRunner> launch_gpu_ring_batch_runner(RingSet& rings, RingBatches& batches,
                                                            uint16_t port_id) {
  if (rings.placement() != Placement::device)
    throw std::invalid_argument("GPU ring batch runner needs rings in device memory");
  const RingSetView v = rings.view();
  const RingBatchView bv = batches.view();
  return std::make_unique<PersistentLoops>(rings, [&](cudaStream_t stream) {
    const unsigned blocks = 2 * v.p.rings;
    load_and_check_residency(ring_batch_kernel, blocks, kThreads, "gpuring batches");
    ring_batch_kernel<<<blocks, kThreads, 0, stream>>>(v, bv, port_id);
  });
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(ring_batch_kernel);

}  // namespace gpunfv::gpuring
