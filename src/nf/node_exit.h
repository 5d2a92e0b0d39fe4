// The switch after an NF's node, run by the NF's last kernel over its packets as each one
// finishes, instead of by a switch kernel the pipeline launches after the NF: a launch fewer per
// node and batch (for S_d's batches of about 1,000 packets on an H200, about 5 us of the issuing
// thread's calls and 2-3 us on the GPU per node). The pipeline offers it through
// GpuStream::node_switch; the NF takes it once, for the launch that finishes its packets
// (take_node_exit), and passes the NodeExit to that kernel by value; an NF in an NF process is
// offered it with its request and says in its reply whether it took it. An NF whose
// last kernel may be followed by a pass that still drops (inbound IPsec's replay check after
// decapsulation) takes none: the pipeline then launches the switch kernel.
//
// What the kernel can do with it: send on the packets this NF passed, as the switch kernel
// would (next_nf, visited and the per-node counts, core/chain_switch.h); calling it for any
// other packet changes nothing.
#pragma once

#include <cstdint>

#include "core/chain_switch.h"
#include "nf/nf_packets.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/stream.h"
#endif

namespace gpunfv {

class NodeExit {
 public:
  NodeExit() = default;  // none taken: the pipeline switches after the NF

  GPUNFV_HD bool taken() const { return taken_; }

#ifdef __CUDACC__
  // Sends packet i on if `finished` (this lane just finished it at this NF) and the NF passed
  // it, and counts it at the node it was sent to. Warp-wide: every lane of a full warp calls it
  // together (one atomic add per warp and target node).
  template <PacketAccess A>
  __device__ GPUNFV_FORCEINLINE void send_on(const NfPackets<A>& p, uint32_t i, bool finished) const {
    if (!taken_) return;  // kernel-uniform
    const BatchView& b = p.framework_view();
    const uint8_t to = finished && i < b.count ? switch_after_node(at_.chain, b, i, at_.node) : kChainDone;
    const unsigned peers = __match_any_sync(0xFFFFFFFFu, unsigned(to));
    if (to != kChainDone && (threadIdx.x & 31u) == unsigned(__ffs(int(peers)) - 1))
      atomicAdd(&b.node_packets[to], uint32_t(__popc(int(peers))));
  }
#endif

 private:
#if GPUNFV_HAVE_CUDA
  friend NodeExit take_node_exit(const GpuStream& s);
#endif
  NodeSwitch at_;
  bool taken_ = false;
};
static_assert(std::is_trivially_copyable_v<NodeExit>);

#if GPUNFV_HAVE_CUDA
// The switch the pipeline offers on `s`, for the NF's launch that finishes its packets: taking
// it tells the pipeline to launch no switch kernel after the NF. None offered: one not taken.
inline NodeExit take_node_exit(const GpuStream& s) {
  NodeExit e;
  if (!s.node_switch || !s.switch_taken) return e;
  e.at_ = *s.node_switch;
  e.taken_ = true;
  *s.switch_taken = true;
  return e;
}
#endif

}  // namespace gpunfv
