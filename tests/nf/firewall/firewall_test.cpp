#include "nf/firewall/firewall.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chain/executor.h"
#include "config/config.h"
#include "core/error.h"
#include "core/parse.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/frame_batch.h"
#include "tests/nf/firewall/firewall_test_util.h"
#include "nf/router/router_logic.h"
#include "nf/firewall/firewall_logic.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

uint32_t ip(const char* text) { return *parse_ipv4(text); }

std::vector<ClassBenchRule> rules_of(const std::string& text) {
  return parse_classbench(text, "test.rules");
}

// A host batch of frames as ingress leaves them, with the firewall's 4-byte results record.
struct FirewallBatch : fixtures::FrameBatch {
  explicit FirewallBatch(const std::vector<std::vector<uint8_t>>& frames)
      : FrameBatch(frames, {.stride = 256, .result_bytes = kFirewallResultBytes}) {}
  uint32_t result(uint32_t i) const { return result_word(i); }  // the matched rule
};

const char* kRules =
    "@10.0.0.0/8 0.0.0.0/0 0 : 65535 22 : 22 0x06/0xFF 0x0000/0x0000 drop\n"     // 0
    "# a comment line, not a rule\n"
    "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000\n"        // 1: action:
    "@0.0.0.0/0 192.168.0.0/16 0 : 0 0 : 0 0x00/0x00 0x0000/0x0000 accept\n"     // 2
    "@0.0.0.0/0 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF 0x0000/0x0000 accept\n";   // 3

TEST(Firewall, ClassifiesAppliesActionsAndWritesResults) {
  Firewall fw("fw", rules_of(kRules), FirewallAction::drop, FirewallAction::accept);
  using fwtest::ipv4_frame;
  std::vector<std::vector<uint8_t>> frames = {
      ipv4_frame({ip("10.1.1.1"), ip("1.1.1.1"), 999, 22, kProtoTcp}),      // rule 0: drop
      ipv4_frame({ip("10.1.1.1"), ip("1.1.1.1"), 999, 53, kProtoUdp}),      // rule 1: drop
      ipv4_frame({ip("11.1.1.1"), ip("1.1.1.1"), 999, 80, kProtoTcp}),      // rule 3: accept
      ipv4_frame({ip("11.1.1.1"), ip("1.1.1.1"), 999, 81, kProtoTcp}),      // none: accept
      // ICMP has no ports: 0 : 0 matches (rule 2), whatever bytes follow the IP header.
      ipv4_frame({ip("11.1.1.1"), ip("192.168.4.4"), 999, 81, kProtoIcmp}),
      // A non-first fragment of TCP to port 22 from 10/8 carries no ports: rule 0 cannot
      // match, and 0 : 0 ports match rule 2.
      ipv4_frame({ip("10.1.1.1"), ip("192.168.4.4"), 999, 22, kProtoTcp}, 100),
  };
  // Not IPv4: an ARP frame and an IPv6 frame pass unclassified.
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  frames.push_back(arp);
  std::vector<uint8_t> ipv6(14 + 40 + 8, 0);
  ipv6[12] = 0x86;
  ipv6[13] = 0xDD;
  ipv6[14] = 0x60;
  ipv6[19] = 8;   // payload length
  ipv6[20] = 17;  // UDP
  frames.push_back(ipv6);

  FirewallBatch b(frames);
  fw.set_result_offset(0);
  fw.process(b.view(), 0, b.view().count, 0);
  const DropReason want_verdict[] = {drop_reason(FirewallDrop::firewall_rule), drop_reason(FirewallDrop::firewall_rule),
                                     DropReason::none, DropReason::none, DropReason::none,
                                     DropReason::none, DropReason::none, DropReason::none};
  const uint32_t want_rule[] = {0, 1, 3, kNoRule, 2, 2, kNotIpv4, kNotIpv4};
  for (uint32_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(b.verdict(i), want_verdict[i]) << i;
    EXPECT_EQ(b.result(i), want_rule[i]) << i;
    EXPECT_EQ(b.view().next_nf[i], want_verdict[i] == DropReason::none ? 1 : 0) << i;
  }

  // collect() counts what reached the NF; report() lists rules with hits.
  fw.collect(b.view(), 0, CollectContext{});
  EXPECT_EQ(fw.rule_hits(), (std::vector<uint64_t>{1, 1, 2, 1}));
  EXPECT_EQ(fw.no_match(), 1u);
  EXPECT_EQ(fw.not_ipv4(), 2u);
  nlohmann::json j;
  fw.report(j);
  EXPECT_EQ(j["rules"], 4);
  EXPECT_EQ(j["rule_hits"], (nlohmann::json{{"0", 1}, {"1", 1}, {"2", 2}, {"3", 1}}));
  EXPECT_EQ(j["no_match"], 1);
  EXPECT_EQ(j["not_ipv4"], 2);
}

TEST(Firewall, DefaultActionAndPacketsNotAtThisNf) {
  Firewall fw("fw", rules_of(kRules), FirewallAction::accept, FirewallAction::drop);
  using fwtest::ipv4_frame;
  FirewallBatch b({ipv4_frame({ip("10.1.1.1"), ip("1.1.1.1"), 9, 53, kProtoUdp}),    // rule 1
                   ipv4_frame({ip("11.1.1.1"), ip("1.1.1.1"), 9, 81, kProtoTcp}),    // default
                   ipv4_frame({ip("11.1.1.1"), ip("1.1.1.1"), 9, 80, kProtoTcp})});  // elsewhere
  // The firewall is second in the chain; packet 2 was dropped by the first NF.
  BatchView v = b.view();
  v.next_nf[0] = v.next_nf[1] = 1;
  v.visited[0] = v.visited[1] = 0b11;  // sent to node 0, then to node 1 (the firewall)
  v.visited[2] = 0b01;
  v.verdict[2] = uint8_t(drop_reason(RouterDrop::no_route));
  fw.process(v, 0, 3, 1);
  EXPECT_EQ(b.verdict(0), DropReason::none);  // rule 1 takes action: accept
  EXPECT_EQ(v.next_nf[0], 2);
  EXPECT_EQ(b.verdict(1), drop_reason(FirewallDrop::firewall_default));
  EXPECT_EQ(v.next_nf[1], 1);
  EXPECT_EQ(b.verdict(2), drop_reason(RouterDrop::no_route));  // untouched, and not counted below
  fw.collect(v, 1, CollectContext{});
  EXPECT_EQ(fw.rule_hits(), (std::vector<uint64_t>{0, 1, 0, 0}));
  EXPECT_EQ(fw.no_match(), 1u);
}

TEST(Firewall, EmptyRuleFileTakesTheDefault) {
  Firewall fw("fw", {}, FirewallAction::drop, FirewallAction::drop);
  FirewallBatch b({fwtest::ipv4_frame({ip("10.1.1.1"), ip("1.1.1.1"), 9, 53, kProtoUdp})});
  fw.process(b.view(), 0, 1, 0);
  EXPECT_EQ(b.verdict(0), drop_reason(FirewallDrop::firewall_default));
  EXPECT_EQ(b.result(0), kNoRule);
  EXPECT_NE(fw.describe().find("0 rules"), std::string::npos) << fw.describe();
}

TEST(Firewall, MatchCommand) {
  Firewall fw("fw", rules_of(kRules), FirewallAction::drop, FirewallAction::accept, "t.rules");
  EXPECT_EQ(fw.command("match 10.0.0.1 1.2.3.4 6 1000 22"), "rule 0 (t.rules:1): drop");
  EXPECT_EQ(fw.command("match 10.0.0.1 1.2.3.4 17 1000 22"), "rule 1 (t.rules:3): drop");
  EXPECT_EQ(fw.command("match 11.0.0.1 1.2.3.4 17 1000 22"), "no rule matches: accept (default)");
  EXPECT_NE(fw.command("match 11.0.0.1 1.2.3.4 17 1000").find("usage"), std::string::npos);
  EXPECT_NE(fw.command("match 11.0.0.1 1.2.3.4 300 1 1").find("usage"), std::string::npos);
  EXPECT_NE(fw.command("describe").find("4 rules (2 drop, 2 accept)"), std::string::npos)
      << fw.command("describe");
}

std::string config_error(const std::string& nf_yaml) {
  auto dir = temp_dir("firewall-config");
  write_file(dir / "ok.rules", kRules);
  write_file(dir / "bad.rules", std::string(kRules) + "@10.0.0.0/8 0.0.0.0/0 0 : 65535\n");
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + source_dir() + R"(/data/traces/dns.cap}
  - {name: out, type: discard}
nfs:
)" + nf_yaml + R"(
chains:
  - {from: in, path: [fw], to: out}
)");
  try {
    load_runtime_config(cfg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Firewall, ConfigKeysAndErrors) {
  EXPECT_EQ(config_error("  - {name: fw, type: firewall, rules: ok.rules}"), "");
  EXPECT_EQ(config_error("  - {name: fw, type: firewall, rules: ok.rules, action: accept, "
                         "default: drop}"),
            "");
  EXPECT_NE(config_error("  - {name: fw, type: firewall, rules: ok.rules, default: reject}")
                .find("default: unknown action 'reject' (expected accept or drop)"),
            std::string::npos);
  EXPECT_NE(config_error("  - {name: fw, type: firewall, rules: ok.rules, rulez: x}")
                .find("rulez"),
            std::string::npos);
  std::string m = config_error("  - {name: fw, type: firewall, rules: bad.rules}");
  EXPECT_NE(m.find("bad.rules:6: expected"), std::string::npos) << m;
  m = config_error("  - {name: fw, type: firewall, rules: missing.rules}");
  EXPECT_NE(m.find("missing.rules: cannot open rule file"), std::string::npos) << m;
  m = config_error("  - {name: fw, type: firewall}");
  EXPECT_NE(m.find("rules"), std::string::npos) << m;
}

TEST(Firewall, MaxRulesStopsAtTheFirstExtraRule) {
  std::string m = config_error("  - {name: fw, type: firewall, rules: ok.rules, max_rules: 1}");
  EXPECT_NE(m.find("ok.rules:"), std::string::npos) << m;
  EXPECT_NE(m.find("more than 1 rules (the firewall's max_rules)"), std::string::npos) << m;
  // Rule indices are 16-bit: the key cannot go past kMaxFirewallRules.
  m = config_error("  - {name: fw, type: firewall, rules: ok.rules, max_rules: 65537}");
  EXPECT_NE(m.find("c.yaml:6:"), std::string::npos) << m;
}

// The 5-tuples of the IPv4 packets of a capture, and the count of the others.
std::vector<FiveTuple> capture_tuples(const std::string& path, uint64_t* not_ipv4) {
  char err[PCAP_ERRBUF_SIZE];
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(pcap_open_offline(path.c_str(), err), pcap_close);
  EXPECT_TRUE(p) << err;
  std::vector<FiveTuple> out;
  pcap_pkthdr* h;
  const u_char* data;
  while (p && pcap_next_ex(p.get(), &h, &data) == 1) {
    IsoSpan<const uint8_t> frame(data, h->caplen);
    PacketHeaders ph;
    if (parse_headers(frame, ph) != DropReason::none) continue;
    if (ph.ip_version != 4) {
      ++*not_ipv4;
      continue;
    }
    out.push_back(ipv4_five_tuple(frame, ph));
  }
  return out;
}

// The chain of examples/firewall.yaml on the CPU backend: per-rule hits and drops agree with a
// linear scan of the rules over the capture's packets, and every packet is accounted for.
TEST(Firewall, ExampleChainReportsRuleHits) {
  // The example's chain, with discard ports instead of its capture files in out/.
  auto dir = temp_dir("firewall-example");
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + source_dir() + R"(/data/traces/SIP_CALL_RTP_G711.pcap}
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
  - {name: fw, type: firewall, rules: )" + source_dir() + R"(/data/firewall/example.rules,
     action: drop, default: drop}
  - {name: r1, type: router, routes: )" + source_dir() + R"(/data/router/example.routes}
chains:
  - {from: in, path: [fw, r1]}
settings: {batch_size: 256, workers: 2}
)");
  RuntimeConfig run_rc = load_runtime_config(cfg);
  RunStats s = run(run_rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");

  const auto rules = read_classbench_file(source_dir() + "/data/firewall/example.rules");
  const auto matches = match_parts(rules);
  uint64_t not_ipv4 = 0;
  std::vector<uint64_t> hits(rules.size(), 0);
  uint64_t no_match = 0, rule_drops = 0;
  for (const FiveTuple& t : capture_tuples(source_dir() + "/data/traces/SIP_CALL_RTP_G711.pcap",
                                           &not_ipv4)) {
    uint32_t r = first_match_linear(matches, t);
    if (r == kNoRule) {
      ++no_match;
      continue;
    }
    ++hits[r];
    if (rules[r].action.value_or(FirewallAction::drop) == FirewallAction::drop) ++rule_drops;
  }
  nlohmann::json want_hits = nlohmann::json::object();
  for (size_t i = 0; i < hits.size(); ++i)
    if (hits[i]) want_hits[std::to_string(i)] = hits[i];
  const nlohmann::json& j = s.nf_reports[0];
  EXPECT_EQ(j["rule_hits"], want_hits) << j.dump();
  EXPECT_EQ(j["no_match"], no_match);
  EXPECT_EQ(j["not_ipv4"], not_ipv4);
  EXPECT_EQ(j["rules"], 13);
  const NfCounters& fw = s.nfs[0];
  EXPECT_EQ(fw.drops.by_reason[size_t(drop_reason(FirewallDrop::firewall_rule))], rule_drops);
  EXPECT_EQ(fw.drops.by_reason[size_t(drop_reason(FirewallDrop::firewall_default))], no_match);
  // The example is meant to show all three outcomes.
  EXPECT_GT(rule_drops, 0u);
  EXPECT_GT(no_match, 0u);
  EXPECT_GT(fw.out, not_ipv4);
}

}  // namespace
}  // namespace gpunfv
