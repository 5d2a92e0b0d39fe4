// The per-packet hooks the GPU ring loops run (io/gpuring/loops/internal/ring_loops.h) when they run an
// NF themselves (a gpuring port's standalone loops, a forward with `route:`): the framework's
// classify step (parse, size check, flow hash), then the NF's __host__ __device__ function
// `Fn(const View&, PacketRef) -> NfVerdict` on the packet in its slot, in place, through a
// one-packet batch view. Malformed frames are dropped by classify, as everywhere else.
#pragma once

#include <cstdint>

#include "chain/classify.h"
#include "core/batch.h"
#include "io/gpuring/ring/ring_sync.h"
#include "nf/run_per_packet.h"

namespace gpunfv::gpuring {

// Pass-through NF: forwards every well-formed packet unchanged.
struct PassThroughView {};
struct PassThrough {
  GPUNFV_HD DropReason operator()(const PassThroughView&, PacketRef) const { return DropReason::none; }
};

// A batch of one packet over a slot, for the NF functions written against BatchView/PacketRef.
struct OnePacket {
  uint16_t len, port, out_port;
  uint8_t next_nf, verdict;
  PacketHeaders headers;
  uint32_t flow_hash;
  uint64_t seq, rx_ns, wire_ns;

  GPUNFV_HD BatchView view(uint8_t* slot, uint32_t slot_bytes) {
    BatchView b;
    b.count = 1;
    b.capacity = 1;
    b.stride = slot_bytes;
    b.data = IsoSpan<uint8_t>(slot, slot_bytes);
    b.len = IsoSpan<uint16_t>(&len, 1);
    b.port = IsoSpan<uint16_t>(&port, 1);
    b.out_port = IsoSpan<uint16_t>(&out_port, 1);
    b.next_nf = IsoSpan<uint8_t>(&next_nf, 1);
    b.verdict = IsoSpan<uint8_t>(&verdict, 1);
    b.headers = IsoSpan<PacketHeaders>(&headers, 1);
    b.flow_hash = IsoSpan<uint32_t>(&flow_hash, 1);
    b.seq = IsoSpan<uint64_t>(&seq, 1);
    b.rx_ns = IsoSpan<uint64_t>(&rx_ns, 1);
    b.wire_ns = IsoSpan<uint64_t>(&wire_ns, 1);
    return b;
  }
};

// Classify + NF on the packet in place: the ring loops' hook (trivially copyable when View is).
// isoPointer's containment, as the batch path's (NetworkFunction::quarantine): once a packet's
// run of the NF reached outside its memory (dropped as nf_isolation_fault), the hook sets
// `quarantine` and drops every later well-formed packet as nf_isolation_fault without running
// the NF. With no flag (empty) a fault drops its packet only. The flag is one word (0: the NF
// runs) that every loop running the hook reads and may set, on CPU threads or GPU warps.
template <typename View, typename Fn>
struct NfPacketHook {
  static_assert(iso_view<View>, GPUNFV_ISO_VIEW_MESSAGE);
  View nf;
  Fn fn;
  uint8_t first_drop = 0;  // code of Fn's first own drop reason (nf/nf_drops.h), if it has any
  IsoSpan<uint32_t> quarantine;
  GPUNFV_HD DropReason operator()(uint8_t* frame, uint32_t slot_bytes, uint32_t& len, uint16_t port_id) const {
    OnePacket m{};
    m.len = static_cast<uint16_t>(len);
    m.port = port_id;
    const BatchView b = m.view(frame, slot_bytes);
    classify_packet(b, 0);
    if (m.verdict == static_cast<uint8_t>(DropReason::none) && !quarantine.empty() &&
        load_relaxed(quarantine.framework_data()) != 0)
      return DropReason::nf_isolation_fault;
    step_packet(b, 0, 0, nf, fn, first_drop);
    if (m.verdict == static_cast<uint8_t>(DropReason::nf_isolation_fault) && !quarantine.empty())
      store_release(quarantine.framework_data(), 1u);
    len = m.len;
    return static_cast<DropReason>(m.verdict);
  }
};

template <typename View, typename Fn>
NfPacketHook<View, Fn> nf_hook(const View& nf, Fn fn, IsoSpan<uint32_t> quarantine = {}) {
  return NfPacketHook<View, Fn>{nf, fn, first_drop_code_of<Fn>(), quarantine};
}

}  // namespace gpunfv::gpuring
