// Builds without CUDA have no ring kernels; asking for them is an error, not a silent fallback.
#include "io/gpuring/loops/gpu_ring_batch_runner.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv::gpuring {
std::unique_ptr<GpuRingRunner> launch_gpu_ring_batch_runner(RingSet&, RingBatches&, uint16_t) {
  throw std::runtime_error("gpuring: GPU ring kernels need a build with CUDA");
}
}  // namespace gpunfv::gpuring
#endif
