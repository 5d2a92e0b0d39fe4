// The device side of an NF's counting (gpu/device_counters.h): a kernel over whole warps that
// asks `slot_of(b, i, slot)` which counter packet i adds 1 to (false: none) and adds the warp's
// packets per slot at once. What collect() counts on the host, for NFs whose count is one slot
// per packet (firewall: rule hits; IPsec: packets per SA). Register each instantiation next to
// the NF's kernels (GPUNFV_REGISTER_KERNEL(count_packets_kernel<SlotOf>)).
#pragma once

#include <algorithm>

#include "core/batch.h"
#include "core/word_access.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_calls.h"
#include "gpu/device_counters.h"
#include "gpu/stream.h"

namespace gpunfv {

// Little-endian word `word` of packet i's slice [offset, ...) of the results record, as NFs
// store them (CollectScan::word's device twin); bounds-checked through IsoSpan, one aligned load
// (result strides and slices are multiples of 4 bytes).
__device__ __forceinline__ uint32_t result_word(const BatchView& b, uint32_t i, uint32_t offset,
                                                uint32_t word) {
  return words::load_aligned(b.results.subspan(size_t(i) * b.result_stride + offset + 4 * word, 4).framework_data());
}

// A count kernel's grid on s: blocks of whole warps (the warp-wide adds need all 32 lanes), one
// thread per packet, at most s.max_blocks.
inline dim3 count_grid(uint32_t count, const GpuStream& s, dim3& block) {
  const int threads = std::max(32, s.threads_per_block / 32 * 32);
  int blocks = static_cast<int>((count + threads - 1) / threads);
  if (s.max_blocks > 0) blocks = std::min(blocks, s.max_blocks);
  block = dim3(threads);
  return dim3(blocks);
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

// Launches the count on s after the NF's kernels (count_grid).
template <typename SlotOf>
void launch_count_packets(const BatchView& b, const DeviceCountersRef& counts, SlotOf slot_of,
                          const GpuStream& s) {
  if (b.count == 0) return;
  dim3 block;
  const dim3 grid = count_grid(b.count, s, block);
  gpu::launch(count_packets_kernel<SlotOf>, grid, block, 0, s.stream, b, counts, slot_of);
}

}  // namespace gpunfv
