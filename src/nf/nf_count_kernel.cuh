// The device side of an NF's counting (gpu/device_counters.h): a kernel over whole warps that
// asks `slot_of(packets, i, slot)` which counter packet i adds 1 to (false: none) and adds the
// warp's packets per slot at once. What collect() counts on the host, for NFs whose count is one
// slot per packet (firewall: rule hits; IPsec: packets per SA). `slot_of` sees the batch as the
// NF does (nf/nf_packets.h). Register each instantiation next to the NF's kernels
// (GPUNFV_REGISTER_KERNEL(count_packets_kernel<SlotOf>)).
#pragma once

#include <algorithm>

#include "gpu/cuda_check.h"
#include "gpu/device_counters.h"
#include "gpu/stream.h"
#include "nf/nf_kernel.h"

namespace gpunfv {

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
__global__ void count_packets_kernel(NfPackets<> p, DeviceCountersRef counts, SlotOf slot_of) {
  // Every lane of a warp runs the same iterations (the block's base is shared): the warp-wide
  // add needs all 32.
  for (uint32_t base = blockIdx.x * blockDim.x; base < p.count(); base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    uint32_t slot = 0;
    const bool on = i < p.count() && slot_of(p, i, slot);
    counts.add_one(slot, on);
  }
}

// Launches the count on s after the NF's kernels (count_grid).
template <typename SlotOf>
void launch_count_packets(const NfPackets<>& p, const DeviceCountersRef& counts, SlotOf slot_of,
                          const GpuStream& s) {
  if (p.count() == 0) return;
  dim3 block;
  const dim3 grid = count_grid(p.count(), s, block);
  launch_nf_kernel(count_packets_kernel<SlotOf>, grid, block, 0, s.stream, p, counts, slot_of);
}

}  // namespace gpunfv
