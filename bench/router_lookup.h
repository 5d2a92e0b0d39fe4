// The router's lookup-only rows, in nf_bench's router cases: destination addresses
// extracted from a batch, our DIR-24-8 lookup writing what rte_lpm_lookup_bulk writes, and the
// comparison of the two results.
#pragma once

#include <cstdint>
#include <vector>

#include "chain/runtime_config.h"
#include "core/batch.h"
#include "core/parse.h"
#include "nf/router/router.h"

namespace gpunfv::bench {

// One word per looked-up address, rte_lpm's encoding: bit 24 set when found, next hop in the
// low 24 bits (rte_lpm may set bits above; compare with kLookupMask).
inline constexpr uint32_t kFoundBit = 1u << 24;
inline constexpr uint32_t kLookupMask = kFoundBit | lpm::kIndexMask;

// Our table's lookup-only loop, writing what rte_lpm_lookup_bulk writes.
inline void lookup_ours(Dir24_8Ref ref, const uint32_t* addrs, uint32_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    LpmResult r = ref.lookup(addrs[i]);
    out[i] = r.found ? (r.next_hop | kFoundBit) : 0;
  }
}

// Whether two lookup words (ours, rte_lpm's) say the same: both not found, or the same hop.
inline bool same_lookup(uint32_t ours, uint32_t peer) {
  uint32_t a = ours & kLookupMask, b = peer & kLookupMask;
  return (a & kFoundBit) == (b & kFoundBit) && (!(a & kFoundBit) || a == b);
}

// The IPv4 destination addresses (host order) of a batch's packets, in packet order; packets
// that are not IPv4 are left out.
inline void extract_destinations(const Batch& b, std::vector<uint32_t>& out) {
  BatchView v = b.view();
  out.clear();
  for (uint32_t i = 0; i < v.count; ++i) {
    if (v.len[i] > v.stride) continue;
    IsoSpan<const uint8_t> frame = v.data.subspan(size_t(i) * v.stride, v.len[i]);
    PacketHeaders h;
    if (parse_headers(frame, h) != DropReason::none || h.ip_version != 4) continue;
    out.push_back(load_be32(frame, h.l3_off + 16u));
  }
}

// The chain's first Router, whose table the lookup rows use; null if it has none.
inline const Router* find_router(const RuntimeConfig& rc) {
  for (auto nf : rc.chains[0].path)
    if (auto* r = dynamic_cast<const Router*>(rc.nfs[nf].get())) return r;
  return nullptr;
}

// Reads every tbl24 entry of a table once before timing, through `lookup(addrs, out, n)`
// (rte_lpm's table lies in EAL memory that nothing has touched where no route covers it: first
// reads would fault).
template <typename Lookup>
void touch_tbl24(const Lookup& lookup) {
  std::vector<uint32_t> sweep(1u << 16), out(1u << 16);
  for (uint32_t hi = 0; hi < 256; ++hi) {
    for (uint32_t k = 0; k < sweep.size(); ++k) sweep[k] = (hi << 24) | (k << 8);
    lookup(sweep.data(), out.data(), sweep.size());
  }
}

}  // namespace gpunfv::bench
