// GPU helpers of the forwarding loops (forward_loops.h) for tests: the sampled integrity sum as
// the forwarding kernel takes it (the kernel itself: gpu_forward_kernels.cuh).
//
// Errors: GpuError on CUDA failures; std::runtime_error in a build without CUDA.
#pragma once

#include <cstdint>

namespace gpunfv::gpuring {

// out[i] = the sampled integrity sum of frame i (frames + i * stride, len[i] bytes), each taken
// by a warp as the forwarding kernel takes it; all pointers in device memory. Synchronous.
void sampled_integrity_by_warps(const uint8_t* frames, uint32_t stride, const uint16_t* len, uint32_t n,
                                uint32_t* out);
// The same, 32 frames to a warp, several at once in groups of lanes (team_each_frame), as the
// forwarding kernel takes a burst's sums.
void sampled_integrity_by_warp_groups(const uint8_t* frames, uint32_t stride, const uint16_t* len, uint32_t n,
                                      uint32_t* out);

}  // namespace gpunfv::gpuring
