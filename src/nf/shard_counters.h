// Counters an NF's collect() adds into from several threads at once (collect_shards(), one
// writer per shard), each shard in lanes: packet i counts in lane i % kLanes, so a run of
// packets that all hit one counter (a chain benchmark's traffic hits one firewall rule, one SA)
// increments kLanes counters in turn instead of each increment waiting for the one before it.
// count_packets() is the loop every NF's collect_range() runs over its packets.
// A slot's total sums its copies over shards and lanes. Shards start 64 bytes apart at least,
// so two shards never write one cache line. Errors: none (indices are the caller's to keep in
// range: slot < slots, shard < shards).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpunfv {

// What one packet adds: `n` (0 or more) to counter `slot`.
struct PacketCount {
  size_t slot;
  uint64_t n;
};

class ShardCounters {
 public:
  static constexpr uint32_t kLanes = 4;  // a power of two: the lane is a mask of the index

  ShardCounters(uint32_t shards, size_t slots)
      : slots_(slots),
        shard_stride_((size_t(kLanes) * slots + kLineWords - 1) / kLineWords * kLineWords + kLineWords),
        data_(shard_stride_ * shards, 0) {}

  // Shard s's lanes: lane l's counter of slot k is at [l * slots() + k].
  uint64_t* shard(uint32_t s) { return data_.data() + s * shard_stride_; }
  size_t slots() const { return slots_; }

  // Counts packets begin..end-1 into shard s: packet i adds what count_of(i) returns
  // (a PacketCount), in its lane. count_of should be branch-free: it runs once per packet.
  template <class CountOf>
  void count_packets(uint32_t s, uint32_t begin, uint32_t end, CountOf count_of) {
    uint64_t* counts = shard(s);
    const size_t slots = slots_;  // a local: the counters' stores could alias the member
    for (uint32_t i = begin; i < end; ++i) {
      const PacketCount c = count_of(i);
      counts[(i & (kLanes - 1)) * slots + c.slot] += c.n;
    }
  }

  // Adds counts[k] to slot k (counted elsewhere, e.g. on the device), for k < counts.size().
  void add(const std::vector<uint64_t>& counts) {
    for (size_t k = 0; k < counts.size() && k < slots_; ++k) data_[k] += counts[k];
  }

  uint64_t total(size_t slot) const {
    uint64_t n = 0;
    for (size_t base = 0; base < data_.size(); base += shard_stride_)
      for (uint32_t l = 0; l < kLanes; ++l) n += data_[base + l * slots_ + slot];
    return n;
  }

 private:
  static constexpr size_t kLineWords = 64 / sizeof(uint64_t);
  size_t slots_;
  size_t shard_stride_;
  std::vector<uint64_t> data_;
};

}  // namespace gpunfv
