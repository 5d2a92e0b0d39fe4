// The GPU twin of nf/run_per_packet.h: a grid-stride kernel that applies an NF's per-packet
// function to the packets at its position in the chain. The grid is capped by the NF's SM
// share (GpuStream::max_blocks), as G-NET bounds an NF's blocks to its SMs.
#pragma once

#include <algorithm>

#include "gpu/gpu_calls.h"
#include "gpu/stream.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

template <typename View, typename Fn>
__global__ void per_packet_kernel(NfPackets<packet_access_of<View, Fn>> packets, View view, Fn fn) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < packets.count();
       i += gridDim.x * blockDim.x)
    step_packet(packets, i, view, fn);
}

template <typename View, typename Fn>
void launch_per_packet(const BatchView& b, uint8_t position, const View& view, Fn fn,
                       NfSlot slot, const GpuStream& s) {
  static_assert(iso_view<View>, GPUNFV_ISO_VIEW_MESSAGE);
  if (b.count == 0) return;
  int threads = s.threads_per_block;
  int blocks = static_cast<int>((b.count + threads - 1) / threads);
  if (s.max_blocks > 0) blocks = std::min(blocks, s.max_blocks);
  gpu::launch(per_packet_kernel<View, Fn>, dim3(blocks), dim3(threads), 0, s.stream,
              framework_packets_at<packet_access_of<View, Fn>>(b, position, slot), view, fn);
}

}  // namespace gpunfv
