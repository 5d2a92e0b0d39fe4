// Random route add/delete sequences over a small address region (so prefixes nest, overlap and
// share /24 blocks), for checking incremental tables against a rebuild and against rte_lpm.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "nf/router/lpm_dir24_8.h"
#include "nf/router/route_set.h"

namespace gpunfv {

struct RouteOp {
  Ipv4Prefix prefix;
  std::optional<uint32_t> next_hop;  // nullopt: delete
};

// `count` operations; about one in three deletes a prefix present at that point (as `set`
// tracks), the rest add or change routes. `with_default`: /0 may appear (rte_lpm has none).
inline std::vector<RouteOp> random_route_ops(uint32_t seed, size_t count, bool with_default) {
  static constexpr uint8_t kLens[] = {8, 12, 16, 20, 22, 23, 24, 24, 25, 26, 28, 30, 31, 32, 32};
  std::mt19937 rng(seed);
  RouteSet set;
  std::vector<RouteOp> ops;
  std::vector<Ipv4Prefix> present;
  for (size_t i = 0; i < count; ++i) {
    if (!present.empty() && rng() % 3 == 0) {
      const size_t k = rng() % present.size();
      ops.push_back({present[k], std::nullopt});
      set.erase(present[k]);
      present[k] = present.back();
      present.pop_back();
      continue;
    }
    uint8_t len = kLens[rng() % std::size(kLens)];
    if (with_default && rng() % 50 == 0) len = 0;
    // 10.0.0.0/14: 1024 /24 blocks, so longer prefixes often share a block.
    const uint32_t addr = 0x0A000000u | (rng() & 0x0003FFFFu);
    const uint32_t mask = len == 0 ? 0 : ~uint32_t(0) << (32 - len);
    const Ipv4Prefix p{addr & mask, len};
    const uint32_t hop = rng() % 7;
    if (!set.find(p)) present.push_back(p);
    set.set(Route{p, hop});
    ops.push_back({p, hop});
  }
  return ops;
}

// Addresses to compare lookups at: every address of 10.0.0.0/22 and random ones of the region.
inline std::vector<uint32_t> route_probe_addresses(uint32_t seed) {
  std::vector<uint32_t> out;
  for (uint32_t a = 0; a < 1024; ++a) out.push_back(0x0A000000u | a);
  std::mt19937 rng(seed);
  for (int i = 0; i < 50000; ++i) out.push_back(0x0A000000u | (rng() & 0x0003FFFFu));
  for (int i = 0; i < 2000; ++i) out.push_back(rng());
  return out;
}

}  // namespace gpunfv
