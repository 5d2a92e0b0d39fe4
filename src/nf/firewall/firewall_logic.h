// The Firewall's per-packet logic, one source for both backends: extract the IPv4 5-tuple,
// classify it (first matching rule wins), write the rule index into the NF's results slice, and
// apply the rule's action, or the default action when no rule matches.
//
// What the firewall classifies on:
//   - IPv4 source and destination addresses, the IPv4 protocol field;
//   - TCP/UDP source and destination ports; 0 for other protocols and for non-first fragments
//     (which carry no L4 header), so a rule with a port range that excludes 0 never matches
//     them, as in iptables without connection tracking.
// Packets that are not IPv4 pass untouched and unclassified (result kNotIpv4): the firewall
// filters IPv4 only; an IPv6 or ARP frame is left to the rest of the chain (a router drops it).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/batch.h"
#include "core/compat.h"
#include "core/drop_reason.h"
#include "core/iso_span.h"
#include "core/parse.h"
#include "core/word_access.h"
#include "nf/firewall/bitvector_classifier.h"
#include "nf/firewall/five_tuple.h"
#include "nf/nf_drops.h"

namespace gpunfv {

#define GPUNFV_FIREWALL_DROPS(X)                                \
  X(firewall_rule, "dropped by a firewall rule")                \
  X(firewall_default, "dropped by the firewall's default action")
GPUNFV_NF_DROP_REASONS(FirewallDrop, "firewall", GPUNFV_FIREWALL_DROPS);

// Per-packet result (uint32, little-endian, in the NF's results slice): the index of the rule
// that matched, kNoRule when none did, kNotIpv4 for a packet the firewall did not classify.
inline constexpr uint32_t kNotIpv4 = 0xFFFFFFFEu;
inline constexpr uint32_t kFirewallResultBytes = 4;

struct FirewallView {
  BitVectorClassifierRef classifier;
  IsoSpan<const uint8_t> rule_drops;  // per rule: 1 if its action is drop
  uint32_t result_offset = 0;         // the NF's slice of the results record
  bool drop_by_default = false;       // action when no rule matches
};
static_assert(iso_view<FirewallView>, GPUNFV_ISO_VIEW_MESSAGE);

// The 5-tuple of an IPv4 packet that parse_headers accepted.
GPUNFV_HD inline FiveTuple ipv4_five_tuple(IsoSpan<const uint8_t> f, const PacketHeaders& h) {
  FiveTuple t;
  t.src_addr = load_be32(f, h.l3_off + 12u);
  t.dst_addr = load_be32(f, h.l3_off + 16u);
  t.proto = h.l4_proto;
  // l4_off is 0 for a non-first fragment; parse_headers checked a first fragment's TCP/UDP
  // header lies within the packet.
  if (h.l4_off != 0 && (h.l4_proto == kProtoTcp || h.l4_proto == kProtoUdp)) {
    t.src_port = load_be16(f, h.l4_off);
    t.dst_port = load_be16(f, h.l4_off + 2u);
  }
  return t;
}

// The result word, little-endian on both backends, with one bounds check (word_access.h).
GPUNFV_HD GPUNFV_FORCEINLINE void store_le32(IsoSpan<uint8_t> out, uint32_t v) {
  const uint32_t w[1] = {v};
  words::store_le_words(out, 0, w);
}

struct FirewallLogic {
  using Drops = FirewallDrop;
  GPUNFV_HD NfVerdict operator()(const FirewallView& v, PacketReader p) const {
    IsoSpan<uint8_t> result = p.results();
    const PacketHeaders& h = p.headers();
    if (h.ip_version != 4) {
      store_le32(result, kNotIpv4);
      return DropReason::none;
    }
    const uint32_t rule = v.classifier.classify(ipv4_five_tuple(p.frame(), h));
    store_le32(result, rule);
    if (rule == kNoRule)
      return v.drop_by_default ? NfVerdict(FirewallDrop::firewall_default) : DropReason::none;
    return v.rule_drops[rule] != 0 ? NfVerdict(FirewallDrop::firewall_rule) : DropReason::none;
  }
};

}  // namespace gpunfv
