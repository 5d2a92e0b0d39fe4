// Kernel loading and persistent kernels. Since CUDA 12.2 the runtime loads a kernel lazily, at
// its first launch, and that load may wait for a context synchronization; while a persistent
// ring kernel spins, such a launch waits for ever (seen on an H200: persistent_kernel.cuh).
// Anything that launches kernels of its own while a ring kernel runs (a chain fed by a GPU
// ring: classify, the NFs, the switch) needs every kernel loaded before the ring kernel starts:
// CUDA_MODULE_LOADING=EAGER, read when CUDA initialises.
#pragma once

namespace gpunfv::gpuring {

// Sets CUDA_MODULE_LOADING=EAGER unless the variable is set; effective only before the
// process's first CUDA call.
void request_eager_kernel_loading();
// Whether this process's CUDA loads kernels lazily (initialises CUDA; false without CUDA, or
// when the driver cannot say).
bool cuda_loads_kernels_lazily();

}  // namespace gpunfv::gpuring
