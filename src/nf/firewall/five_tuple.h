// The IPv4 5-tuple a firewall classifies, and a 5-tuple rule: one range per field.
//
// FiveTuple is what the per-packet code extracts (both backends); FiveTupleRule is host-side
// input to the classifier, the rte_acl peer and the linear-scan reference, which all share
// FiveTupleRule::matches() as the one definition of what "a rule matches" means.
#pragma once

#include <cstdint>
#include <span>

#include "core/ipv4_prefix.h"

namespace gpunfv {

// Header fields in host byte order. Ports are 0 where the packet has none (not TCP/UDP, or a
// non-first fragment).
struct FiveTuple {
  uint32_t src_addr = 0;
  uint32_t dst_addr = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t proto = 0;
};

// "No rule matched": the classifier's answer and the firewall's per-packet result.
inline constexpr uint32_t kNoRule = 0xFFFFFFFFu;

struct FiveTupleRule {
  Ipv4Prefix src;  // host bits zero
  Ipv4Prefix dst;
  uint16_t src_port_lo = 0, src_port_hi = 0xFFFF;
  uint16_t dst_port_lo = 0, dst_port_hi = 0xFFFF;
  uint8_t proto = 0;
  bool any_proto = true;  // ClassBench proto mask 0x00; otherwise the protocol must equal `proto`

  bool operator==(const FiveTupleRule&) const = default;

  // The address range [first, last] a prefix covers.
  static uint32_t first_address(const Ipv4Prefix& p) { return p.addr; }
  static uint32_t last_address(const Ipv4Prefix& p) {
    return p.len >= 32 ? p.addr : p.addr | (0xFFFFFFFFu >> p.len);  // (x >> 32 is undefined)
  }

  bool matches(const FiveTuple& t) const {
    auto in_prefix = [](const Ipv4Prefix& p, uint32_t a) {
      return a >= first_address(p) && a <= last_address(p);
    };
    return in_prefix(src, t.src_addr) && in_prefix(dst, t.dst_addr) &&
           t.src_port >= src_port_lo && t.src_port <= src_port_hi &&
           t.dst_port >= dst_port_lo && t.dst_port <= dst_port_hi &&
           (any_proto || t.proto == proto);
  }
};

// The reference answer: index of the first rule (in order) that matches, kNoRule if none.
inline uint32_t first_match_linear(std::span<const FiveTupleRule> rules, const FiveTuple& t) {
  for (size_t i = 0; i < rules.size(); ++i)
    if (rules[i].matches(t)) return uint32_t(i);
  return kNoRule;
}

}  // namespace gpunfv
