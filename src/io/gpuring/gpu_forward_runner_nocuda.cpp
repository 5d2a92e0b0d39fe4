// Builds without CUDA have no forwarding kernel; asking for it is an error, not a fallback.
#include "io/gpuring/gpu_forward_runner.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv::gpuring {
std::unique_ptr<GpuRingRunner> launch_gpu_forward_runner(ForwardRings&, uint16_t, const NfHook&) {
  throw std::runtime_error("gpuring forward: the forwarding kernel needs a build with CUDA");
}
}  // namespace gpunfv::gpuring
#endif
