// DIR-24-8 longest-prefix-match table for IPv4 (Gupta, Lin, McKeown, INFOCOM 1998; the layout
// of DPDK's rte_lpm). A lookup is one read of tbl24 (indexed by the top 24 address bits) and,
// for the few /24 blocks that hold longer prefixes, one more read of a 256-entry tbl8 group.
//
// Split as in cuCollections: Dir24_8 owns and builds the tables on the host (and uploads them
// to the device once); Dir24_8Ref is the trivially copyable view that NF code looks up through,
// on either backend, reading only via IsoSpan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/compat.h"
#include "core/ipv4_prefix.h"
#include "core/iso_span.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

// Entry encoding, the same in tbl24 and tbl8:
//   bit 31  valid: a route covers this entry; low 24 bits are its next-hop index
//   bit 30  extended (tbl24 only): low 24 bits are a tbl8 group index
//   0       no route
namespace lpm {
inline constexpr uint32_t kValid = 1u << 31;
inline constexpr uint32_t kExtended = 1u << 30;
inline constexpr uint32_t kIndexMask = (1u << 24) - 1;
inline constexpr uint32_t kMaxNextHop = kIndexMask;
inline constexpr size_t kTbl24Entries = size_t(1) << 24;
inline constexpr size_t kTbl8GroupEntries = 256;
}  // namespace lpm

struct Route {
  Ipv4Prefix prefix;
  uint32_t next_hop = 0;  // index into the caller's next-hop table, at most lpm::kMaxNextHop
};

// Result of a lookup: found, and if so the next-hop index of the longest matching prefix.
struct LpmResult {
  bool found = false;
  uint32_t next_hop = 0;
};

class Dir24_8Ref {
 public:
  Dir24_8Ref() = default;
  GPUNFV_HD Dir24_8Ref(IsoSpan<const uint32_t> tbl24, IsoSpan<const uint32_t> tbl8)
      : tbl24_(tbl24), tbl8_(tbl8) {}

  GPUNFV_HD GPUNFV_FORCEINLINE LpmResult lookup(uint32_t addr_host_order) const {
    uint32_t e = tbl24_[addr_host_order >> 8];
    if (e & lpm::kExtended)
      e = tbl8_[(size_t(e & lpm::kIndexMask) << 8) | (addr_host_order & 0xFF)];
    return LpmResult{(e & lpm::kValid) != 0, e & lpm::kIndexMask};
  }

 private:
  IsoSpan<const uint32_t> tbl24_;
  IsoSpan<const uint32_t> tbl8_;
};
static_assert(std::is_trivially_copyable_v<Dir24_8Ref>);

class Dir24_8 {
 public:
  // The full Internet table needs 451 groups; room for ten times that costs nothing until used,
  // because groups are allocated as prefixes longer than /24 need them.
  static constexpr uint32_t kDefaultMaxTbl8Groups = 4096;

  // Builds the table. Overlapping prefixes resolve by longest match. If the same prefix
  // appears more than once, the later route wins. Throws std::length_error when more than
  // `max_tbl8_groups` /24 blocks hold prefixes longer than /24, std::invalid_argument for a
  // next hop above lpm::kMaxNextHop or a prefix with host bits set.
  explicit Dir24_8(std::span<const Route> routes,
                   uint32_t max_tbl8_groups = kDefaultMaxTbl8Groups);

  Dir24_8(const Dir24_8&) = delete;
  Dir24_8& operator=(const Dir24_8&) = delete;
  Dir24_8(Dir24_8&&) = default;
  Dir24_8& operator=(Dir24_8&&) = default;

  // View of the host tables (CPU backend, tests).
  Dir24_8Ref ref() const;

  size_t route_count() const { return route_count_; }
  uint32_t tbl8_groups_used() const { return uint32_t(tbl8_.size() / lpm::kTbl8GroupEntries); }
  uint32_t max_tbl8_groups() const { return max_tbl8_groups_; }
  size_t table_bytes() const { return (tbl24_.size() + tbl8_.size()) * sizeof(uint32_t); }

#if GPUNFV_HAVE_CUDA
  // Copies the tables to device memory (once; later calls do nothing).
  void upload_to_device();
  bool on_device() const { return device_tbl24_.size() != 0; }
  // View of the device tables; valid after upload_to_device().
  Dir24_8Ref device_ref() const;
#endif

 private:
  uint32_t allocate_tbl8_group(uint32_t fill);

  std::vector<uint32_t> tbl24_;
  std::vector<uint32_t> tbl8_;  // tbl8_groups_used() groups of 256 entries
  uint32_t max_tbl8_groups_;
  size_t route_count_ = 0;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint32_t> device_tbl24_;
  DeviceBuffer<uint32_t> device_tbl8_;
#endif
};

}  // namespace gpunfv
