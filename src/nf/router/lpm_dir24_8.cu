// Dir24_8's device twin kept in step with incremental updates: the entries add() and remove()
// wrote are gathered on the host and written on the device by one scatter kernel.
#include <algorithm>

#include "gpu/gpu_calls.h"
#include "gpu/kernel_registry.h"
#include "nf/nf_kernel.h"
#include "nf/router/lpm_dir24_8.h"

namespace gpunfv {

namespace {

// Bit 31 of a destination index: the entry is in tbl8 (tbl24 otherwise).
constexpr uint32_t kInTbl8 = 1u << 31;

__global__ void lpm_scatter_kernel(IsoSpan<const uint2> writes, IsoSpan<uint32_t> tbl24,
                                   IsoSpan<uint32_t> tbl8) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < writes.size(); i += gridDim.x * blockDim.x) {
    const uint2 w = writes[i];
    if (w.x & kInTbl8)
      tbl8[w.x & ~kInTbl8] = w.y;
    else
      tbl24[w.x] = w.y;
  }
}

}  // namespace

void Dir24_8::sync_to_device(const Touched& t, cudaStream_t stream) {
  std::vector<uint2> writes;
  writes.reserve(t.tbl24.size() + t.groups.size() * lpm::kTbl8GroupEntries);
  for (uint32_t i : t.tbl24) writes.push_back(uint2{i, tbl24_[i]});
  std::vector<uint32_t> groups = t.groups;
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (uint32_t g : groups)
    for (uint32_t k = 0; k < lpm::kTbl8GroupEntries; ++k) {
      const uint32_t at = g * uint32_t(lpm::kTbl8GroupEntries) + k;
      writes.push_back(uint2{at | kInTbl8, tbl8_[at]});
    }
  if (writes.empty()) return;
  // Grown only (a buffer freed and made per update would make CUDA wait for the device).
  if (device_staging_.size() < writes.size()) device_staging_.allocate(writes.size() * 2);
  gpu::copy_to_device(device_staging_.data(), writes.data(), writes.size() * sizeof(uint2), stream);
  const uint32_t n = uint32_t(writes.size());
  const uint32_t blocks = std::min<uint32_t>((n + 255) / 256, 1024);
  launch_nf_kernel(lpm_scatter_kernel, dim3(blocks), dim3(256), 0, stream,
                   IsoSpan<const uint2>(device_staging_.span().subspan(0, n)), device_tbl24_.span(),
                   device_tbl8_.span());
  gpu::synchronize(stream);
}

GPUNFV_REGISTER_KERNEL(lpm_scatter_kernel);

}  // namespace gpunfv
