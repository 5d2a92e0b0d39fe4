// Builds without CUDA have no ring kernels; asking for them is an error, not a silent fallback.
#include "io/gpuring/gpu_ring_runner.h"
#include "io/gpuring/staged_path.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv::gpuring {
std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet&, uint16_t, const NfHook&) {
  throw std::runtime_error("gpuring: GPU ring kernels need a build with CUDA");
}
std::unique_ptr<StagedPath> make_staged_path(uint32_t, uint32_t, const NfHook&) {
  throw std::runtime_error("gpuring: the staged path needs a build with CUDA");
}
}  // namespace gpunfv::gpuring
#endif
