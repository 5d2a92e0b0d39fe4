// The firewall's per-packet path: rules and frames, both from the input, through ingress
// classification and the Firewall (bit-vector search) on the CPU backend, checked packet by
// packet against a linear first-match scan over a 5-tuple read from the frame independently.
//
// Input: a flags byte (bit 0: rules without an action drop, bit 1: no match drops), a rule
// count byte (at most 24 rules), per rule 17 bytes (source and destination address and length,
// port ranges, protocol, protocol mask, action: see below); the rest is frames.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/parse.h"
#include "fuzz/fuzz_util.h"
#include "nf/firewall/firewall.h"
#include "nf/firewall/firewall_logic.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

constexpr uint32_t kStride = 256;

Ipv4Prefix prefix(uint32_t addr, uint8_t len) {
  len %= 33;
  return {len == 0 ? 0 : addr & (0xFFFFFFFFu << (32 - len)), len};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t flags = in.u8();
  const FirewallAction rule_action = flags & 1 ? FirewallAction::drop : FirewallAction::accept;
  const bool drop_by_default = flags & 2;
  std::vector<ClassBenchRule> rules;
  const uint32_t count = in.u8() % 25;
  for (uint32_t k = 0; k < count; ++k) {
    ClassBenchRule r;
    uint32_t src = in.u32(), dst = in.u32();
    uint8_t src_len = in.u8(), dst_len = in.u8();
    r.match.src = prefix(src, src_len);
    r.match.dst = prefix(dst, dst_len);
    r.match.src_port_lo = in.u16();
    r.match.src_port_hi = in.u16();
    r.match.dst_port_lo = in.u8();  // low ports, so frames can hit them
    r.match.dst_port_hi = in.u8();
    if (r.match.src_port_lo > r.match.src_port_hi) std::swap(r.match.src_port_lo, r.match.src_port_hi);
    if (r.match.dst_port_lo > r.match.dst_port_hi) std::swap(r.match.dst_port_lo, r.match.dst_port_hi);
    r.match.proto = in.u8();
    r.match.any_proto = in.u8() & 1;
    uint8_t a = in.u8() % 3;  // 0: the firewall's action:, 1: accept, 2: drop
    if (a) r.action = a == 1 ? FirewallAction::accept : FirewallAction::drop;
    r.file_line = long(k + 1);
    rules.push_back(r);
  }
  const std::vector<FiveTupleRule> match = match_parts(rules);
  std::vector<bool> drops;
  for (const auto& r : rules) drops.push_back(r.action.value_or(rule_action) == FirewallAction::drop);

  // The firewall keeps no per-packet state: the one built for the previous input serves again
  // while the rule bytes are the same (most mutations change only the frames).
  static std::string cached_key;
  static std::unique_ptr<OneNfChain> cached;
  const std::string key(reinterpret_cast<const char*>(data), size - in.left());
  if (!cached || key != cached_key) {
    cached.reset();
    cached = std::make_unique<OneNfChain>(std::make_unique<Firewall>(
        "fw", rules, rule_action, drop_by_default ? FirewallAction::drop : FirewallAction::accept));
    cached_key = key;
  }
  const OneNfChain& chain = *cached;
  const auto frames = read_frames(in, 64, 300);
  auto batch = make_batch(frames, kStride, kFirewallResultBytes);
  const BatchView v = batch->view();
  chain.run(v);
  check_accounted(v);

  for (uint32_t i = 0; i < v.count; ++i) {
    const std::vector<uint8_t>& f = frames[i];
    PacketHeaders h{};
    DropReason parsed = f.size() > kStride
                            ? DropReason::oversize
                            : parse_headers(IsoSpan<const uint8_t>(f.data(), f.size()), h);
    const DropReason got = DropReason(v.verdict[i]);
    if (parsed != DropReason::none) {
      FUZZ_CHECK(got == parsed);
      continue;
    }
    uint32_t result;
    std::memcpy(&result, v.results.framework_data() + size_t(i) * kFirewallResultBytes, 4);
    if (h.ip_version != 4) {
      FUZZ_CHECK(got == DropReason::none && result == kNotIpv4);
      continue;
    }
    // The 5-tuple, from the IPv4 header: ports for TCP/UDP first fragments only.
    const uint8_t* ip = f.data() + h.l3_off;
    FiveTuple t;
    t.src_addr = be32(ip + 12);
    t.dst_addr = be32(ip + 16);
    t.proto = ip[9];
    const bool first_fragment = (be16(ip + 6) & 0x1FFF) == 0;
    if (first_fragment && (t.proto == kProtoTcp || t.proto == kProtoUdp)) {
      const uint8_t* l4 = ip + (ip[0] & 0x0F) * 4;
      t.src_port = be16(l4);
      t.dst_port = be16(l4 + 2);
    }
    const uint32_t want = first_match_linear(match, t);
    FUZZ_CHECK(result == want);
    const DropReason want_verdict =
        want == kNoRule ? (drop_by_default ? drop_reason(FirewallDrop::firewall_default) : DropReason::none)
                        : (drops[want] ? drop_reason(FirewallDrop::firewall_rule) : DropReason::none);
    FUZZ_CHECK(got == want_verdict);
    FUZZ_CHECK(std::memcmp(v.data.framework_data() + size_t(i) * kStride, f.data(), f.size()) == 0);
  }
  return 0;
}
