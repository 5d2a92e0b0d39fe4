// isoPointer's batch view (G-NET section 4.3): the batch as one NF at one chain node sees it, the
// only batch an NF's own kernel is handed (nf/nf_kernel.h). Through it the NF reads the packets
// waiting for it (bytes and headers read-only, unless it asks for PacketAccess::rewrite), writes
// its own slice of their results records, and passes or drops them with its own drop codes. It
// cannot reach another NF's results, nor a packet at another node: writes to a packet that is
// not the NF's (finish() of a packet not here(), drop_passed() of one not passed()) do nothing.
//
// An NF gets one from NetworkFunction::packets_at() with the batch it was handed; the framework
// alone reaches the whole batch behind it (framework_view()). Its per-packet accessors are
// checked against count() alone (core/batch.h's CountedView), so a loop over i < count() pays
// for none of them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/batch.h"
#include "core/word_access.h"
#include "nf/nf_drops.h"

namespace gpunfv {

// read: the NF does not change packets; rewrite: it may change their bytes, length, headers and
// egress port (encapsulation, NAT).
enum class PacketAccess : uint8_t { read, rewrite };

template <PacketAccess A = PacketAccess::read>
class NfPackets;
// The packets of `b` at chain node `position`, as the NF with `slot` sees them. For the
// framework's drivers and NetworkFunction::packets_at(); NF code must not call it.
template <PacketAccess A>
GPUNFV_HD NfPackets<A> framework_packets_at(const BatchView& b, uint8_t position, NfSlot slot);

template <PacketAccess A>
class NfPackets {
 public:
  using Packet = std::conditional_t<A == PacketAccess::rewrite, PacketRef, PacketReader>;

  // Packets 0 .. count() - 1 are the batch's; an index past them is refused (core/iso_fault.h).
  // A loop over i < count() makes the per-packet accessors' checks free: they check the same.
  GPUNFV_HD uint32_t count() const { return b().count; }
  GPUNFV_HD uint8_t position() const { return position_; }
  GPUNFV_HD NfSlot slot() const { return slot_; }

  // Packet i is alive and waits for this NF.
  GPUNFV_HD bool here(uint32_t i) const {
    return in_batch(i) && entry(b().verdict, i) == static_cast<uint8_t>(DropReason::none) &&
           entry(b().next_nf, i) == position_;
  }
  // This NF passed packet i (alive, next at the node after this one), for a pass after the
  // per-packet one (IPsec's anti-replay check).
  GPUNFV_HD bool passed(uint32_t i) const {
    return in_batch(i) && entry(b().verdict, i) == static_cast<uint8_t>(DropReason::none) &&
           entry(b().next_nf, i) == static_cast<uint8_t>(position_ + 1);
  }
  // For counting once the NF's passes are done: packet i was sent to this NF; this NF dropped it.
  GPUNFV_HD bool reached(uint32_t i) const { return reached_node(b(), i, position_); }
  GPUNFV_HD bool dropped(uint32_t i) const { return dropped_at_node(b(), i, position_); }

  GPUNFV_HD Packet packet(uint32_t i) const { return Packet(c_, i, slot_); }
  // The NF's slice of packet i's results record.
  GPUNFV_HD IsoSpan<uint8_t> results(uint32_t i) const {
    if (!in_batch(i)) return {};
    return IsoSpan<uint8_t>(b().results.framework_data() + size_t(i) * b().result_stride +
                                slot_.result_offset,
                            slot_.result_bytes);
  }
  // Word k of the slice, little-endian, as one aligned access (slices and strides are multiples
  // of 4 bytes, chain/batch_shape.cpp).
  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t result_word(uint32_t i, uint32_t k) const {
    return words::load_aligned(results(i).template framework_run<4>(4 * size_t(k)));
  }
  GPUNFV_HD GPUNFV_FORCEINLINE void set_result_word(uint32_t i, uint32_t k, uint32_t v) const {
    words::store_aligned(results(i).template framework_run<4>(4 * size_t(k)), v);
  }

  // Ends this NF's work on packet i, which is here(): on to the next node, or dropped as `r`.
  GPUNFV_HD void finish(uint32_t i, NfVerdict r) const {
    if (here(i)) framework_finish(i, r);
  }
  // Drops packet i, which this NF passed, as `r` (back at this NF's node, as a drop of its own).
  GPUNFV_HD void drop_passed(uint32_t i, NfVerdict r) const {
    if (!passed(i) || r.passes()) return;
    entry(b().verdict, i) = r.code(slot_.first_drop);
    entry(b().next_nf, i) = position_;
  }

  // The whole batch, for the framework's drivers (nf/run_per_packet.h); NF code must not call it.
  GPUNFV_HD const BatchView& framework_view() const { return b(); }
  // finish() of a packet the driver found here() already; NF code must not call it.
  GPUNFV_HD void framework_finish(uint32_t i, NfVerdict r) const {
    if (r.passes())
      entry(b().next_nf, i) = static_cast<uint8_t>(position_ + 1);
    else
      entry(b().verdict, i) = r.code(slot_.first_drop);
  }

 private:
  template <PacketAccess B>
  friend GPUNFV_HD NfPackets<B> framework_packets_at(const BatchView&, uint8_t, NfSlot);
  // A slot whose results slice does not fit the record gets no slice.
  GPUNFV_HD NfPackets(const BatchView& b, uint8_t position, NfSlot slot)
      : c_(b), position_(position), slot_(slot) {
    if (slot.result_offset > b.result_stride || slot.result_bytes > b.result_stride - slot.result_offset)
      slot_.result_bytes = 0;
  }

  GPUNFV_HD const BatchView& b() const { return c_.view(); }
  // Index i is one of the batch's packets; one outside is refused.
  GPUNFV_HD GPUNFV_FORCEINLINE bool in_batch(uint32_t i) const {
#if GPUNFV_CHECKED
    if (i >= b().count) {
      iso_refuse(i, b().count);
      return false;
    }
#endif
    return true;
  }
  // Entry i of a per-packet array, for i in_batch (the CountedView's arrays hold count entries).
  template <typename T>
  GPUNFV_HD GPUNFV_FORCEINLINE static T& entry(const IsoSpan<T>& a, uint32_t i) {
    return a.framework_data()[i];
  }

  CountedView c_;
  uint8_t position_ = 0;
  NfSlot slot_;
};
static_assert(std::is_trivially_copyable_v<NfPackets<>>);

template <PacketAccess A>
GPUNFV_HD NfPackets<A> framework_packets_at(const BatchView& b, uint8_t position, NfSlot slot) {
  return NfPackets<A>(b, position, slot);
}

template <class T>
inline constexpr bool is_nf_packets = false;
template <PacketAccess A>
inline constexpr bool is_nf_packets<NfPackets<A>> = true;

}  // namespace gpunfv
