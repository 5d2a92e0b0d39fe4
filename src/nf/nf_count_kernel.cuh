// The device side of an NF's counting (gpu/device_counters.h): a kernel over whole warps that
// asks `slot_of(packets, i, slot)` which counter packet i adds 1 to (false: none) and adds the
// warp's packets per slot at once. What collect() counts on the host, for NFs whose count is one
// slot per packet (firewall: rule hits; IPsec: packets per SA). `slot_of` sees the batch as the
// NF does (nf/nf_packets.h). Register each instantiation next to the NF's kernels
// (GPUNFV_REGISTER_KERNEL(count_packets_kernel<SlotOf>)).
#pragma once

#include "gpu/cuda_check.h"
#include "gpu/device_counters.h"
#include "gpu/stream.h"
#include "nf/nf_kernel.h"

namespace gpunfv {

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

// Launches the count on s after the NF's kernels (whole_warp_grid: the warp-wide add needs all
// 32 lanes).
template <typename SlotOf>
void launch_count_packets(const NfPackets<>& p, const DeviceCountersRef& counts, SlotOf slot_of,
                          const GpuStream& s) {
  if (p.count() == 0) return;
  dim3 block;
  const dim3 grid = whole_warp_grid(p.count(), s, block);
  launch_nf_kernel(count_packets_kernel<SlotOf>, grid, block, 0, s.stream, p, counts, slot_of);
}

}  // namespace gpunfv
