// isoPointer's batch view (G-NET section 4.3): the batch as one NF at one chain node sees it, the
// only batch an NF's own kernel is handed (nf/nf_kernel.h). Through it the NF reads the packets
// waiting for it (bytes and headers read-only, unless it asks for PacketAccess::rewrite), writes
// its own slice of their results records, and passes or drops them with its own drop codes. It
// cannot reach another NF's results, nor a packet at another node: writes to a packet that is
// not the NF's (finish() of a packet not here(), drop_passed() of one not passed()) do nothing.
//
// An NF gets one from NetworkFunction::packets_at() with the batch it was handed; the framework
// alone reaches the whole batch behind it (framework_view()).
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
class NfPackets {
 public:
  using Packet = std::conditional_t<A == PacketAccess::rewrite, PacketRef, PacketReader>;

  GPUNFV_HD uint32_t count() const { return b_.count; }
  GPUNFV_HD uint8_t position() const { return position_; }
  GPUNFV_HD NfSlot slot() const { return slot_; }

  // Packet i is alive and waits for this NF.
  GPUNFV_HD bool here(uint32_t i) const {
    return b_.verdict[i] == static_cast<uint8_t>(DropReason::none) && b_.next_nf[i] == position_;
  }
  // This NF passed packet i (alive, next at the node after this one), for a pass after the
  // per-packet one (IPsec's anti-replay check).
  GPUNFV_HD bool passed(uint32_t i) const {
    return b_.verdict[i] == static_cast<uint8_t>(DropReason::none) &&
           b_.next_nf[i] == static_cast<uint8_t>(position_ + 1);
  }
  // For counting once the NF's passes are done: packet i was sent to this NF; this NF dropped it.
  GPUNFV_HD bool reached(uint32_t i) const { return reached_node(b_, i, position_); }
  GPUNFV_HD bool dropped(uint32_t i) const { return dropped_at_node(b_, i, position_); }

  GPUNFV_HD Packet packet(uint32_t i) const { return Packet(b_, i, slot_); }
  // The NF's slice of packet i's results record.
  GPUNFV_HD IsoSpan<uint8_t> results(uint32_t i) const {
    return b_.results.subspan(size_t(i) * b_.result_stride + slot_.result_offset, slot_.result_bytes);
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
    if (!here(i)) return;
    if (r.passes())
      b_.next_nf[i] = static_cast<uint8_t>(position_ + 1);
    else
      b_.verdict[i] = r.code(slot_.first_drop);
  }
  // Drops packet i, which this NF passed, as `r` (back at this NF's node, as a drop of its own).
  GPUNFV_HD void drop_passed(uint32_t i, NfVerdict r) const {
    if (!passed(i) || r.passes()) return;
    b_.verdict[i] = r.code(slot_.first_drop);
    b_.next_nf[i] = position_;
  }

  // The whole batch, for the framework's drivers (nf/run_per_packet.h); NF code must not call it.
  GPUNFV_HD const BatchView& framework_view() const { return b_; }

 private:
  friend class NetworkFunction;  // packets_at(): the NF's own node and slot
  GPUNFV_HD NfPackets(const BatchView& b, uint8_t position, NfSlot slot)
      : b_(b), position_(position), slot_(slot) {}

  BatchView b_;
  uint8_t position_ = 0;
  NfSlot slot_;
};
static_assert(std::is_trivially_copyable_v<NfPackets<>>);

template <class T>
inline constexpr bool is_nf_packets = false;
template <PacketAccess A>
inline constexpr bool is_nf_packets<NfPackets<A>> = true;

}  // namespace gpunfv
