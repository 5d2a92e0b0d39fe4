// Builds without CUDA have no warps; asking for them is an error, not a fallback.
#include "io/gpuring/loops/gpu_forward_runner.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv::gpuring {
void sampled_integrity_by_warps(const uint8_t*, uint32_t, const uint16_t*, uint32_t, uint32_t*) {
  throw std::runtime_error("gpuring forward: warps need a build with CUDA");
}
void sampled_integrity_by_warp_groups(const uint8_t*, uint32_t, const uint16_t*, uint32_t, uint32_t*) {
  throw std::runtime_error("gpuring forward: warps need a build with CUDA");
}
}  // namespace gpunfv::gpuring
#endif
