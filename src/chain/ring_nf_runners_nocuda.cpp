// Builds without CUDA have no ring kernels; asking for them is an error, not a silent fallback.
#include "chain/ring_nf_runners.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv::gpuring {
std::unique_ptr<GpuRingRunner> launch_gpu_ring_runner(RingSet&, uint16_t, const NfHook&) {
  throw std::runtime_error("gpuring: GPU ring kernels need a build with CUDA");
}
std::unique_ptr<GpuRingRunner> launch_gpu_forward_runner(ForwardRings&, uint16_t, const NfHook&) {
  throw std::runtime_error("gpuring forward: the forwarding kernel needs a build with CUDA");
}
}  // namespace gpunfv::gpuring
#endif
