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
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "core/compat.h"
#include "core/ipv4_prefix.h"
#include "core/iso_span.h"
#include "core/iso_view.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

// Entry encoding, the same in tbl24 and tbl8:
//   bit 31      valid: a route covers this entry; low 24 bits are its next-hop index
//   bit 30      extended (tbl24 only): low 24 bits are a tbl8 group index
//   bits 24-29  the covering route's prefix length (as rte_lpm keeps it: incremental add and
//               delete decide by it which entries a prefix owns); lookups ignore them
//   0           no route
namespace lpm {
inline constexpr uint32_t kValid = 1u << 31;
inline constexpr uint32_t kExtended = 1u << 30;
inline constexpr uint32_t kIndexMask = (1u << 24) - 1;
inline constexpr uint32_t kDepthShift = 24;
inline constexpr uint32_t kDepthMask = 0x3Fu << kDepthShift;
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
  using iso_fields = IsoFields<IsoSpan<const uint32_t>, IsoSpan<const uint32_t>>;  // core/iso_view.h
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
  // A host copy (no device twin), for a second buffer beside this one.
  Dir24_8 clone() const;

  // Incremental updates (rte_lpm's scheme): only the prefix's range is touched.
  // add: the route now covers every entry of its range that no longer prefix covers (a
  // prefix already present gets the new next hop). remove: the entries the prefix covered go
  // to `covering`, the longest remaining shorter prefix that covers it (nullopt: no route);
  // the caller keeps the prefix set. A tbl8 group left holding no prefix longer than /24 is
  // folded back into its tbl24 entry and reused. Both record the entries they write in
  // `touched` when given (to copy just those to a device twin). Throws as the constructor.
  struct Touched {
    std::vector<uint32_t> tbl24;  // entry indices
    std::vector<uint32_t> groups; // tbl8 group indices (rewritten whole)
  };
  void add(const Route& r, Touched* touched = nullptr);
  void remove(const Ipv4Prefix& p, const std::optional<Route>& covering,
              Touched* touched = nullptr);
  // Whole-table comparison: equal lookups everywhere, tbl8 group numbering aside.
  bool same_lookups(const Dir24_8& other) const;

  size_t route_count() const { return route_count_; }
  uint32_t tbl8_groups_used() const {
    return uint32_t(tbl8_.size() / lpm::kTbl8GroupEntries - free_groups_.size());
  }
  uint32_t max_tbl8_groups() const { return max_tbl8_groups_; }
  bool has_group(uint32_t tbl24_index) const { return tbl24_[tbl24_index] & lpm::kExtended; }
  size_t table_bytes() const { return (tbl24_.size() + tbl8_.size()) * sizeof(uint32_t); }

#if GPUNFV_HAVE_CUDA
  // Copies the tables to device memory (once; later calls do nothing). tbl8 gets room for
  // max_tbl8_groups(), so updates never reallocate it.
  void upload_to_device();
  bool on_device() const { return device_tbl24_.size() != 0; }
  // Copies the entries `t` names to the device tables (one scatter kernel on `stream`, then
  // waits for it): what add() and remove() changed since the last sync.
  void sync_to_device(const Touched& t, cudaStream_t stream);
  // View of the device tables; valid after upload_to_device().
  Dir24_8Ref device_ref() const;
#endif

 private:
  Dir24_8() = default;
  uint32_t allocate_tbl8_group(uint32_t fill);
  void fold_group_if_plain(uint32_t tbl24_index, Touched* touched);

  std::vector<uint32_t> tbl24_;
  std::vector<uint32_t> tbl8_;  // groups of 256 entries, some on free_groups_
  std::vector<uint32_t> free_groups_;
  uint32_t max_tbl8_groups_ = 0;
  size_t route_count_ = 0;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint32_t> device_tbl24_;
  DeviceBuffer<uint32_t> device_tbl8_;
  DeviceBuffer<uint2> device_staging_;  // sync_to_device()'s writes
#endif
};

}  // namespace gpunfv
