// A whole chain on one packet, in one thread: classify, enter the chain, then each node's NF
// and the switch after it, in path order; the same steps, in the same order per packet, as the
// fused pipeline's kernels take over a whole batch one at a time. Only NFs whose per-packet
// function can run here (nf/device_packet_dispatch.h) may be on the path. The persistent
// pipeline's kernel runs it (chain/persistent_chain.h); tests run it on the host.
#pragma once

#include <cstdint>

#include "chain/classify.h"
#include "chain/runtime_config.h"
#include "core/batch.h"
#include "core/chain_switch.h"
#include "nf/device_packet_dispatch.h"

namespace gpunfv {

// Most NFs a chain run per packet may hold (the persistent kernel copies their functions).
inline constexpr uint32_t kMaxChainPacketNodes = 8;

// Whether `c` can run per packet: at most kMaxChainPacketNodes NFs, each with a device packet
// function (NetworkFunction::device_packet_kind).
inline bool chain_runs_per_packet(const RuntimeConfig& rc, const Chain& c) {
  if (c.path.size() > kMaxChainPacketNodes) return false;
  for (uint16_t nf : c.path)
    if (rc.nfs[nf]->device_packet_kind() == DevicePacketFnKind::none) return false;
  return true;
}

// `sent(node)` is called with every node the packet is sent to (kChainDone included), as the
// switch kernels count node_packets.
template <class Sent>
GPUNFV_HD inline void run_chain_on_packet(const ChainView& c, const BatchView& b, uint32_t i,
                                          const DevicePacketFn* fns, uint32_t nodes, Sent sent) {
  classify_packet(b, i);
  sent(enter_chain(c, b, i));
  for (uint32_t k = 0; k < nodes; ++k) {
    step_device_packet_fn(b, i, static_cast<uint8_t>(k), fns[k]);
    sent(switch_after_node(c, b, i, static_cast<uint8_t>(k)));
  }
}

}  // namespace gpunfv
