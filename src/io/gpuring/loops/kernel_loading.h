// Kernel loading and persistent kernels. Since CUDA 12.2 the runtime loads a kernel lazily, at
// its first launch, and that load may wait for a context synchronization; while a persistent
// ring kernel spins, such a launch waits for ever (seen on an H200: persistent_kernel.cuh).
// Anything that launches kernels of its own while a ring kernel runs (a chain fed by a GPU
// ring: classify, the NFs, the switch) needs every kernel loaded before the ring kernel starts:
// CUDA_MODULE_LOADING=EAGER, read when CUDA initialises. (gpu/device_preflight.h covers what
// else CUDA sets up at a first use.)
//
// The device's hardware queues: CUDA maps streams onto CUDA_DEVICE_MAX_CONNECTIONS queues (8 by
// default); past that, streams share a queue, and work queued behind the ring kernel in its
// queue waits for it for ever. A chain fed by a ring uses a dozen streams or more (each stage
// thread, each NF lane and its aux stream, the NIC emulator's two, egress, the ring kernel), so
// the process asks for the most, 32, read when CUDA initialises too.
#pragma once

namespace gpunfv::gpuring {

inline constexpr int kHardwareQueuesWanted = 32;

// Sets CUDA_MODULE_LOADING=EAGER and CUDA_DEVICE_MAX_CONNECTIONS=32, each unless the variable
// is set; effective only before the process's first CUDA call.
void request_persistent_kernel_environment();
// Whether this process's CUDA loads kernels lazily (initialises CUDA; false without CUDA, or
// when the driver cannot say).
bool cuda_loads_kernels_lazily();

}  // namespace gpunfv::gpuring
