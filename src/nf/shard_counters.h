// Counters an NF's collect() adds into from several threads at once (collect_shards(), one
// writer per shard), each shard in lanes: packet i counts in lane i % lanes, so a run of packets
// that all hit one counter (a chain benchmark's traffic hits one firewall rule, one SA)
// increments `lanes` counters in turn instead of each increment waiting for the one before it.
// A slot's total sums its copies over shards and lanes. Shards start 64 bytes apart at least,
// so two shards never write one cache line. Errors: none (indices are the caller's to keep in
// range: slot < slots, shard < shards).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpunfv {

class ShardCounters {
 public:
  ShardCounters(uint32_t shards, uint32_t lanes, size_t slots)
      : lanes_(lanes),
        slots_(slots),
        shard_stride_((size_t(lanes) * slots + kLineWords - 1) / kLineWords * kLineWords + kLineWords),
        data_(shard_stride_ * shards, 0) {}

  // Shard s's lanes: lane l's counter of slot k is at [l * slots() + k].
  uint64_t* shard(uint32_t s) { return data_.data() + s * shard_stride_; }
  uint32_t lanes() const { return lanes_; }
  size_t slots() const { return slots_; }

  // Adds counts[k] to slot k (counted elsewhere, e.g. on the device), for k < counts.size().
  void add(const std::vector<uint64_t>& counts) {
    for (size_t k = 0; k < counts.size() && k < slots_; ++k) data_[k] += counts[k];
  }

  uint64_t total(size_t slot) const {
    uint64_t n = 0;
    for (size_t base = 0; base < data_.size(); base += shard_stride_)
      for (uint32_t l = 0; l < lanes_; ++l) n += data_[base + l * slots_ + slot];
    return n;
  }

 private:
  static constexpr size_t kLineWords = 64 / sizeof(uint64_t);
  uint32_t lanes_;
  size_t slots_;
  size_t shard_stride_;
  std::vector<uint64_t> data_;
};

}  // namespace gpunfv
