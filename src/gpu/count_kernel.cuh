// The device side of an NF's counting (gpu/device_counters.h): a kernel over whole warps that
// asks `slot_of(b, i, slot)` which counter packet i adds 1 to (false: none) and adds the warp's
// packets per slot at once. What collect() counts on the host, for NFs whose count is one slot
// per packet (firewall: rule hits; IPsec: packets per SA). Register each instantiation next to
// the NF's kernels (GPUNFV_REGISTER_KERNEL(count_packets_kernel<SlotOf>)).
#pragma once

#include <algorithm>

#include "core/batch.h"
#include "gpu/cuda_check.h"
#include "gpu/device_counters.h"
#include "gpu/stream.h"

namespace gpunfv {

// Little-endian word `word` of packet i's slice [offset, ...) of the results record, as NFs
// store them (CollectScan::word's device twin); bounds-checked through IsoSpan.
__device__ __forceinline__ uint32_t result_word(const BatchView& b, uint32_t i, uint32_t offset,
                                                uint32_t word) {
  IsoSpan<uint8_t> r = b.results.subspan(size_t(i) * b.result_stride + offset + 4 * word, 4);
  return uint32_t(r[0]) | (uint32_t(r[1]) << 8) | (uint32_t(r[2]) << 16) | (uint32_t(r[3]) << 24);
}

template <typename SlotOf>
__global__ void count_packets_kernel(BatchView b, DeviceCountersRef counts, SlotOf slot_of) {
  // Every lane of a warp runs the same iterations (the block's base is shared): the warp-wide
  // add needs all 32.
  for (uint32_t base = blockIdx.x * blockDim.x; base < b.count; base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    uint32_t slot = 0;
    const bool on = i < b.count && slot_of(b, i, slot);
    counts.add_one(slot, on);
  }
}

// Launches the count on s after the NF's kernels; blocks of whole warps, at most s.max_blocks.
template <typename SlotOf>
void launch_count_packets(const BatchView& b, const DeviceCountersRef& counts, SlotOf slot_of,
                          const GpuStream& s) {
  if (b.count == 0) return;
  const int threads = std::max(32, s.threads_per_block / 32 * 32);
  int blocks = static_cast<int>((b.count + threads - 1) / threads);
  if (s.max_blocks > 0) blocks = std::min(blocks, s.max_blocks);
  count_packets_kernel<<<blocks, threads, 0, s.stream>>>(b, counts, slot_of);
  GPUNFV_CUDA(cudaGetLastError());
}

}  // namespace gpunfv
