// Builds without CUDA have no device-resident batches; asking for their copier is an error.
#include "chain/ring_egress_copy.h"

#include <stdexcept>

#if !GPUNFV_HAVE_CUDA
namespace gpunfv {
struct RingEgressCopy::Impl {};
RingEgressCopy::RingEgressCopy(uint32_t, uint32_t) {
  throw std::runtime_error("gpuring: device-resident batches need a build with CUDA");
}
RingEgressCopy::~RingEgressCopy() = default;
uint8_t* RingEgressCopy::host_rows() const { return nullptr; }
size_t RingEgressCopy::host_bytes() const { return 0; }
uint64_t RingEgressCopy::fetch(const BatchView&, const std::vector<uint32_t>&, const uint16_t*) { return 0; }
void RingEgressCopy::upload(void*, const void*, size_t) {}
}  // namespace gpunfv
#endif
