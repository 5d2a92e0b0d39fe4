// The prefix set a live DIR-24-8 table is rendered from: what incremental updates keep so that
// deleting a prefix restores the route that covered it (the longest shorter prefix left).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/ipv4_prefix.h"
#include "nf/router/lpm_dir24_8.h"

namespace gpunfv {

class RouteSet {
 public:
  RouteSet() = default;
  explicit RouteSet(const std::vector<Route>& routes) {
    for (const Route& r : routes) set(r);
  }

  std::optional<uint32_t> find(const Ipv4Prefix& p) const {
    auto it = hops_.find(key(p));
    if (it == hops_.end()) return std::nullopt;
    return it->second;
  }
  // Inserts or changes the route of r.prefix.
  void set(const Route& r) { hops_[key(r.prefix)] = r.next_hop; }
  // False if the prefix was not in the set.
  bool erase(const Ipv4Prefix& p) { return hops_.erase(key(p)) != 0; }
  // The longest prefix shorter than p that covers it.
  std::optional<Route> covering(const Ipv4Prefix& p) const {
    for (int len = int(p.len) - 1; len >= 0; --len) {
      const Ipv4Prefix c{p.addr & mask(uint8_t(len)), uint8_t(len)};
      if (auto hop = find(c)) return Route{c, *hop};
    }
    return std::nullopt;
  }
  size_t size() const { return hops_.size(); }
  std::vector<Route> routes() const {
    std::vector<Route> out;
    out.reserve(hops_.size());
    for (const auto& [k, hop] : hops_)
      out.push_back(Route{Ipv4Prefix{uint32_t(k), uint8_t(k >> 32)}, hop});
    return out;
  }

 private:
  static uint32_t mask(uint8_t len) { return len == 0 ? 0 : ~uint32_t(0) << (32 - len); }
  static uint64_t key(const Ipv4Prefix& p) { return (uint64_t(p.len) << 32) | p.addr; }
  std::unordered_map<uint64_t, uint32_t> hops_;
};

}  // namespace gpunfv
