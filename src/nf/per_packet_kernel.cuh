// The GPU twin of nf/run_per_packet.h: a grid-stride kernel that applies an NF's per-packet
// function to the packets at its position in the chain. The grid is capped by the NF's SM
// share (GpuStream::max_blocks), as G-NET bounds an NF's blocks to its SMs.
#pragma once

#include "gpu/device_counters.h"
#include "gpu/gpu_calls.h"
#include "gpu/stream.h"
#include "nf/nf_count_kernel.cuh"
#include "nf/node_exit.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

// Warp-uniform steps (blocks of whole warps): the switch after the node, where the kernel runs
// it (`exit` taken, nf/node_exit.h), counts with warp-wide adds.
template <typename View, typename Fn>
__global__ void per_packet_kernel(NfPackets<packet_access_of<View, Fn>> packets, View view, Fn fn,
                                  NodeExit exit) {
  for (uint32_t base = blockIdx.x * blockDim.x; base < packets.count(); base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    const bool stepped = i < packets.count() && step_packet(packets, i, view, fn);
    exit.send_on(packets, i, stepped);
  }
}

// The same with the NF's device count kept as each packet finishes, a launch fewer than a count
// kernel after it (nf/nf_count_kernel.cuh: `slot_of(packets, i, slot)` names the counter packet
// i adds 1 to).
template <typename View, typename Fn, typename SlotOf>
__global__ void per_packet_counted_kernel(NfPackets<> packets, View view, Fn fn,
                                          DeviceCountersRef counts, SlotOf slot_of, NodeExit exit) {
  for (uint32_t base = blockIdx.x * blockDim.x; base < packets.count(); base += gridDim.x * blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    uint32_t slot = 0;
    const bool stepped = i < packets.count() && step_packet(packets, i, view, fn);
    const bool counted = stepped && slot_of(packets, i, slot);  // sets slot
    counts.add_one(slot, counted);
    exit.send_on(packets, i, stepped);
  }
}

template <typename View, typename Fn>
void launch_per_packet(const BatchView& b, uint8_t position, const View& view, Fn fn,
                       NfSlot slot, const GpuStream& s) {
  static_assert(iso_view<View>, GPUNFV_ISO_VIEW_MESSAGE);
  if (b.count == 0) return;
  dim3 block;
  const dim3 grid = whole_warp_grid(b.count, s, block);
  gpu::launch(per_packet_kernel<View, Fn>, grid, block, 0, s.stream,
              framework_packets_at<packet_access_of<View, Fn>>(b, position, slot), view, fn,
              take_node_exit(s));
}

// launch_per_packet() for an NF that only reads packets and counts on the device: counts into
// `counts` as slot_of says, in the same kernel.
template <typename View, typename Fn, typename SlotOf>
void launch_per_packet_counted(const BatchView& b, uint8_t position, const View& view, Fn fn,
                               NfSlot slot, const GpuStream& s, const DeviceCountersRef& counts,
                               SlotOf slot_of) {
  static_assert(iso_view<View>, GPUNFV_ISO_VIEW_MESSAGE);
  static_assert(packet_access_of<View, Fn> == PacketAccess::read, "a counted NF reads packets only");
  if (b.count == 0) return;
  dim3 block;
  const dim3 grid = whole_warp_grid(b.count, s, block);
  gpu::launch(per_packet_counted_kernel<View, Fn, SlotOf>, grid, block, 0, s.stream,
              framework_packets_at<PacketAccess::read>(b, position, slot), view, fn, counts, slot_of,
              take_node_exit(s));
}

}  // namespace gpunfv
