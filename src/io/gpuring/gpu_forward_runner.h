// The forwarding loops (forward_loops.h) as one persistent kernel: one block per ring pair
// (one thread of it runs the pair's loop), nothing on the host in the data path. Loaded before
// launch and checked to fit on the GPU at once, as the ring port's kernel (gpu_ring_kernels.cu).
// The hook is pass-through (no routing) or the router.
//
// Errors: std::invalid_argument for rings not in device memory; GpuError when the launch fails
// or the kernel faults; std::runtime_error in a build without CUDA.
#pragma once

#include <cstdint>
#include <memory>

#include "io/gpuring/forward_rings.h"
#include "io/gpuring/gpu_ring_runner.h"

namespace gpunfv::gpuring {

std::unique_ptr<GpuRingRunner> launch_gpu_forward_runner(ForwardRings& rings, uint16_t port_id,
                                                         const NfHook& hook);

}  // namespace gpunfv::gpuring
