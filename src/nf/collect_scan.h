// Host-side reading of a finished batch in an NF's collect(): the arrays collect() reads are
// bounds-checked once per batch here, then read through plain pointers, so the per-packet loops
// are tight (no IsoSpan check per byte, whole little-endian words loaded at once) and the
// compiler can keep them free of branches. Host only: NF per-packet code keeps using IsoSpan.
//
// Errors: a batch whose arrays are shorter than its count says, or an NF slice outside the
// results record, aborts the process like an IsoSpan access out of bounds (iso_violation).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "core/batch.h"

namespace gpunfv {

class CollectScan {
 public:
  // The arrays of `b` that collect() of the NF whose results slice is [offset, offset + bytes)
  // reads, checked for b.count packets.
  CollectScan(const BatchView& b, uint32_t offset, uint32_t bytes)
      : count_(b.count), stride_(b.result_stride) {
    if (b.visited.size() < count_) iso_violation(count_, b.visited.size());
    if (b.verdict.size() < count_) iso_violation(count_, b.verdict.size());
    if (b.next_nf.size() < count_) iso_violation(count_, b.next_nf.size());
    if (bytes && (size_t(offset) + bytes > stride_ || size_t(count_) * stride_ > b.results.size()))
      iso_violation(size_t(count_) * stride_ + offset + bytes, b.results.size());
    visited_ = b.visited.framework_data();
    verdict_ = b.verdict.framework_data();
    next_nf_ = b.next_nf.framework_data();
    slice_ = b.results.framework_data() + offset;
  }

  uint32_t count() const { return count_; }
  // reached_node() and dropped_at_node() of core/batch.h, unchecked.
  bool reached(uint32_t i, uint8_t node) const { return (visited_[i] >> node) & 1u; }
  bool dropped_at(uint32_t i, uint8_t node) const {
    return verdict_[i] != static_cast<uint8_t>(DropReason::none) && next_nf_[i] == node;
  }
  // Little-endian word `word` (at byte 4 * word) of packet i's slice, as NFs store them.
  uint32_t word(uint32_t i, uint32_t word) const {
    uint32_t v;
    std::memcpy(&v, slice_ + size_t(i) * stride_ + 4 * word, 4);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
    return v;
  }
  // Packet i's slice (for records with their own load function).
  const uint8_t* slice(uint32_t i) const { return slice_ + size_t(i) * stride_; }

 private:
  uint32_t count_, stride_;
  const uint32_t* visited_ = nullptr;
  const uint8_t* verdict_ = nullptr;
  const uint8_t* next_nf_ = nullptr;
  const uint8_t* slice_ = nullptr;
};

}  // namespace gpunfv
