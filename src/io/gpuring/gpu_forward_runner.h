// The forwarding loops (forward_loops.h) as one persistent kernel: one block per ring pair
// (its warp runs the pair's loop as a team, team.h), nothing on the host in the data path. Loaded before
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

// For tests: out[i] = the sampled integrity sum of frame i (frames + i * stride, len[i] bytes),
// each taken by a warp as the forwarding kernel takes it; all pointers in device memory.
// Synchronous. GpuError on failure; std::runtime_error in a build without CUDA.
void sampled_integrity_by_warps(const uint8_t* frames, uint32_t stride, const uint16_t* len, uint32_t n,
                                uint32_t* out);
// The same, 32 frames to a warp, several at once in groups of lanes (team_each_frame), as the
// forwarding kernel takes a burst's sums.
void sampled_integrity_by_warp_groups(const uint8_t* frames, uint32_t stride, const uint16_t* len, uint32_t n,
                                      uint32_t* out);

}  // namespace gpunfv::gpuring
