// The framework's per-packet driver on the CPU: one source, the NF's __host__ __device__
// function `Fn(view, PacketReader or PacketRef) -> NfVerdict`, applied to the packets that are at
// this NF. A function that takes a PacketReader is handed the packet read-only.
// The GPU twin is nf/per_packet_kernel.cuh; both keep the same rule for next_nf and verdict.
#pragma once

#include "core/batch.h"
#include "nf/nf_drops.h"
#include "nf/nf_packets.h"

namespace gpunfv {

// `fn` on one packet: its verdict, or nf_isolation_fault if the run reached outside the NF's
// memory (core/iso_fault.h).
template <typename View, typename Fn, typename Packet>
GPUNFV_HD GPUNFV_FORCEINLINE NfVerdict verdict_of(const View& view, Fn fn, const Packet& p) {
  IsoFaultScope scope;
  const NfVerdict r = fn(view, p);
  return scope.faulted() ? NfVerdict(DropReason::nf_isolation_fault) : r;
}

// Applies `fn` to packet i if it is alive and at `position`; advances it or records the drop
// (`slot`: the NF's first own drop code and its results slice, core/batch.h). A packet whose run of
// `fn` reached outside the NF's memory is dropped as nf_isolation_fault (core/iso_fault.h).
// Returns whether it applied `fn`.
template <typename View, typename Fn>
GPUNFV_HD GPUNFV_FORCEINLINE bool step_packet(const BatchView& b, uint32_t i, uint8_t position,
                                              const View& view, Fn fn, NfSlot slot) {
  if (b.verdict[i] != static_cast<uint8_t>(DropReason::none) || b.next_nf[i] != position) return false;
  NfVerdict r = DropReason::none;
  if constexpr (std::is_invocable_v<Fn, const View&, PacketReader>)
    r = verdict_of(view, fn, PacketReader(b, i, slot));  // the NF does not rewrite packets
  else
    r = verdict_of(view, fn, PacketRef(b, i, slot));
  if (r.passes())
    b.next_nf[i] = static_cast<uint8_t>(position + 1);
  else
    b.verdict[i] = r.code(slot.first_drop);
  return true;
}

// Returns the packets `fn` was applied to.
template <typename View, typename Fn>
uint32_t run_per_packet_cpu(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position,
                            const View& view, Fn fn, NfSlot slot) {
  uint32_t n = 0;
  for (uint32_t i = begin; i < end; ++i) n += step_packet(b, i, position, view, fn, slot);
  return n;
}

// Which NfPackets a function `Fn(view, packet)` needs: read for one that takes a PacketReader.
template <typename View, typename Fn>
inline constexpr PacketAccess packet_access_of =
    std::is_invocable_v<Fn, const View&, PacketReader> ? PacketAccess::read : PacketAccess::rewrite;

// The same for an NF's own kernels and passes, over the packets it was handed (nf/nf_packets.h):
// the per-packet checks are then those of NfPackets, which a loop over i < count() makes free.
// A function that rewrites packets (takes a PacketRef) needs NfPackets<PacketAccess::rewrite>.
template <PacketAccess A, typename View, typename Fn>
GPUNFV_HD GPUNFV_FORCEINLINE bool step_packet(const NfPackets<A>& packets, uint32_t i,
                                              const View& view, Fn fn) {
  static_assert(A == PacketAccess::rewrite || packet_access_of<View, Fn> == PacketAccess::read,
                "the NF's function rewrites packets: it needs NfPackets<PacketAccess::rewrite>");
  if (!packets.here(i)) return false;
  packets.framework_finish(i, verdict_of(view, fn, packets.packet(i)));
  return true;
}
template <PacketAccess A, typename View, typename Fn>
uint32_t run_per_packet_cpu(const NfPackets<A>& packets, uint32_t begin, uint32_t end,
                            const View& view, Fn fn) {
  uint32_t n = 0;
  for (uint32_t i = begin; i < end; ++i) n += step_packet(packets, i, view, fn);
  return n;
}

}  // namespace gpunfv
