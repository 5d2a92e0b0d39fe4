// Device preflight: everything CUDA sets up on first use, done before a persistent kernel (the
// GPU ring port's loops) starts, so nothing has to wait for the device to go idle while it
// spins. On an H200, a chain fed by a gpuring port hung once its first batch reached the GPU:
// the chain's streams and the NIC emulator's copies both stopped completing. What the chain did
// there for the first time in the process, beside the ring kernel: a cudaMemsetAsync, kernels
// that use local memory and printf (IsoSpan's bounds check; the ring kernel uses neither),
// timing events, new streams and events; CUDA may set up local memory, the printf buffer or an
// internal kernel at such a first use, and that set-up waits for the device to idle.
//
// prepare_device_for_persistent_kernels(), on the calling thread's current context (the
// primary, or a lane's green context) and with no persistent kernel running:
//   - loads every registered kernel (gpu/kernel_registry.h; with CUDA_MODULE_LOADING=EAGER
//     they are loaded already, this also reads their local memory sizes);
//   - raises the stack limit (cudaLimitStackSize) to the largest local memory any kernel uses,
//     so no later launch grows it (a growth waits for the device to idle);
//   - runs once, on `stream`, each kind of work the chain and egress paths issue: a memset,
//     1D and 2D copies both ways between device and pinned host memory, a kernel that uses
//     local memory, shared memory and printf and writes pinned host memory, timing events;
//   - waits for all of it.
//
// Errors: GpuError on CUDA failures; std::runtime_error in a build without CUDA.
#pragma once

#include <cstddef>
#include <string>

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv {

struct PreflightReport {
  size_t kernels = 0;          // registered kernels loaded
  size_t max_local_bytes = 0;  // the largest per-thread local memory among them
  size_t stack_limit = 0;      // cudaLimitStackSize afterwards
  std::string line() const;    // "24 kernels loaded, local memory <= 48 B/thread, stack limit 1024 B"
};

#if GPUNFV_HAVE_CUDA
// `stream`: where the sample work runs (nullptr: a stream of its own, made and destroyed here).
PreflightReport prepare_device_for_persistent_kernels(cudaStream_t stream = nullptr);
#endif

}  // namespace gpunfv
