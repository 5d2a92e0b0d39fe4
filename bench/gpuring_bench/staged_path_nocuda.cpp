// Builds without CUDA have no staged path; asking for it is an error, not a silent fallback.
#include "gpuring_bench/staged_path.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv::gpuring {
std::unique_ptr<StagedPath> make_staged_path(uint32_t, uint32_t, const NfHook&) {
  throw std::runtime_error("gpuring: the staged path needs a build with CUDA");
}
}  // namespace gpunfv::gpuring
#endif
