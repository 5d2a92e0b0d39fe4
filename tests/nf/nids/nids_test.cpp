// The NIDS NF: which bytes are inspected, when a rule fires, the results record, action drop,
// the GPU kernel's split of the work (emulated here on the host, lane by lane), configuration
// errors, and a whole run on a real trace with its eve.json-like alert log.
#include "nf/nids/nids.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "chain/executor.h"
#include "config/config.h"
#include "core/error.h"
#include "tests/chain/chain_test_util.h"
#include "tests/nf/nids/nids_test_util.h"
#include "nf/nids/nids_logic.h"

namespace gpunfv {
namespace {

using namespace nids_testing;
using testing::temp_dir;
using testing::write_file;

std::string payload_string(const std::vector<uint8_t>& frame) {
  auto p = payload_of(frame);
  return std::string(p.begin(), p.end());
}

TEST(NidsPayload, AfterTheL4HeaderUpToTheEndOfTheIpPacket) {
  EXPECT_EQ(payload_string(tcp_frame("hello")), "hello");
  EXPECT_EQ(payload_string(tcp_frame("hello", 12)), "hello");        // TCP options skipped
  EXPECT_EQ(payload_string(tcp_frame("hi", 0, 20)), "hi");           // Ethernet padding left out
  EXPECT_EQ(payload_string(tcp_frame("")), "");
  EXPECT_EQ(payload_string(l4_8byte_frame(kProtoUdp, "dns")), "dns");
  EXPECT_EQ(payload_string(l4_8byte_frame(kProtoIcmp, "ping")), "ping");
  // Another IP protocol: everything after the IP header (here GRE: 8 bytes then "gre").
  EXPECT_EQ(payload_string(l4_8byte_frame(47, "gre")), std::string(8, '\0') + "gre");
  // A later IPv4 fragment: its bytes after the IP header.
  auto frag = tcp_frame("tail");
  frag[14 + 6] = 0x00;
  frag[14 + 7] = 0x10;  // fragment offset 16 (x 8 bytes)
  EXPECT_EQ(payload_string(frag), std::string(frag.begin() + 34, frag.end()));  // TCP header too
  EXPECT_EQ(payload_string(arp_frame()), "");  // not IP: nothing
}

const char* kRules = R"(alert http any any -> any any (msg:"get evil"; content:"GET "; content:"evil.example"; nocase; sid:1; rev:2;)
alert tcp any any -> any any (msg:"bad agent"; content:"User-Agent|3a| Bad"; sid:2;)
alert tcp any any -> any any (msg:"abc \"quoted\""; content:"abc"; content:!"xyz"; sid:3;)
alert tcp any any -> any any (msg:"binary"; content:"|00 01 02|"; sid:4;)
)";

std::unique_ptr<Nids> make_nids(const std::string& rules_text, const std::string& extra = "") {
  auto dir = temp_dir("nids-unit");
  write_file(dir / "t.rules", rules_text);
  return Nids::from_config(ConfigNode(YAML::Load("name: ids\ntype: nids\nrules: t.rules\n" + extra),
                                      (dir / "c.yaml").string()));
}

std::vector<uint32_t> kept_rules(const NidsResult& r) {
  return std::vector<uint32_t>(r.rules, r.rules + r.kept());
}

TEST(Nids, RuleFiresWhenEveryContentOccurs) {
  auto nids = make_nids(kRules);
  EXPECT_EQ(nids->rules().rules.size(), 4u);
  std::vector<std::vector<uint8_t>> frames = {
      tcp_frame("GET / HTTP/1.1\r\nHost: EVIL.Example\r\n\r\n"),  // rule 0 (nocase)
      tcp_frame("GET / HTTP/1.1\r\nHost: good.example\r\n\r\n"),  // only one of rule 0's contents
      tcp_frame("User-Agent: bad\r\n"),                            // rule 1 is case-sensitive
      tcp_frame("xx User-Agent: Bad abcxyz"),                      // rules 1 and 2 (! ignored)
      tcp_frame(std::string("\x00\x01\x02", 3)),                   // rule 3
      tcp_frame(std::string("\x00\x01", 2), 0, 30),  // its padding would complete rule 3: not read
      arp_frame(),
  };
  auto b = run_cpu(*nids, frames);
  const std::vector<std::vector<uint32_t>> want = {{0}, {}, {}, {1, 2}, {3}, {}, {}};
  for (uint32_t i = 0; i < frames.size(); ++i) {
    NidsResult r = result_of(*b, i);
    EXPECT_EQ(kept_rules(r), want[i]) << "packet " << i;
    EXPECT_EQ(r.fired, want[i].size()) << "packet " << i;
    EXPECT_EQ(b->view().verdict[i], uint8_t(DropReason::none)) << "action alert passes";
    EXPECT_EQ(b->view().next_nf[i], 1u);
    // The same answer from the matcher's own reference path.
    auto p = payload_of(frames[i]);
    EXPECT_EQ(nids->matcher().fired_rules(p), want[i]);
  }
}

// A rule's fast_pattern content is its anchor (else its longest); the choice changes which
// rules are looked at, never which fire.
TEST(Nids, FastPatternIsTheAnchorAndChangesNoVerdict) {
  std::string error;
  std::vector<Rule> rules;
  for (const char* text :
       {R"(alert tcp any any -> any any (content:"GET"; fast_pattern; content:"/admin.php"; sid:1;))",
        R"(alert tcp any any -> any any (content:"GET"; content:"/admin.php"; sid:2;))"}) {
    auto r = parse_rule(text, error);
    ASSERT_TRUE(r) << error;
    rules.push_back(*r);
  }
  RuleMatcher m(rules);
  EXPECT_EQ(m.patterns()[m.anchor(0)].bytes, "GET");
  EXPECT_EQ(m.patterns()[m.anchor(1)].bytes, "/admin.php");
  auto bytes = [](std::string_view s) {
    return std::vector<uint8_t>(s.begin(), s.end());
  };
  EXPECT_EQ(m.fired_rules(bytes("GET /admin.php HTTP/1.0")), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(m.fired_rules(bytes("GET /index.html")), std::vector<uint32_t>{});
  EXPECT_EQ(m.fired_rules(bytes("POST /admin.php")), std::vector<uint32_t>{});
}

TEST(Nids, ActionDropDropsPacketsThatFire) {
  auto nids = make_nids(kRules, "action: drop\n");
  auto b = run_cpu(*nids, {tcp_frame("abc"), tcp_frame("abd")});
  EXPECT_EQ(b->view().verdict[0], uint8_t(drop_reason(NidsDrop::nids_match)));
  EXPECT_EQ(b->view().next_nf[0], 0u);  // dropped here: egress counts it against this NF
  EXPECT_EQ(b->view().verdict[1], uint8_t(DropReason::none));
  EXPECT_EQ(b->view().next_nf[1], 1u);
}

TEST(Nids, KeepsTheSevenLowestRulesAndCountsAll) {
  std::string rules;
  for (int i = 0; i < 10; ++i)
    rules += "alert tcp any any -> any any (msg:\"r" + std::to_string(i) + "\"; content:\"<r" +
             std::to_string(i) + ">\"; sid:" + std::to_string(100 + i) + ";)\n";
  auto nids = make_nids(rules);
  auto b = run_cpu(*nids, {tcp_frame("<r9><r8><r7><r6><r5><r4><r3><r2><r1><r0>"),
                           tcp_frame("<r9> <r3> <r5>")});
  NidsResult all = result_of(*b, 0);
  EXPECT_EQ(all.fired, 10u);
  EXPECT_EQ(kept_rules(all), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(kept_rules(result_of(*b, 1)), (std::vector<uint32_t>{3, 5, 9}));
}

// The GPU kernel's algorithm, lane by lane on the host (nids.cu): the packet's G lanes scan
// nids_chunk's chunks with run-on into one bitmap, split the bitmap's words for rule
// evaluation, each lane keeping its 7 lowest, then the group merge. It must give the CPU's
// record exactly, for every G and chunk size the kernel may use.
NidsResult emulate_group(const RuleMatcherRef& m, const std::vector<uint8_t>& payload,
                         uint32_t group_lanes, uint32_t min_chunk) {
  const uint32_t len = uint32_t(payload.size());
  const uint32_t words = (m.pattern_count() + 31) / 32;
  std::vector<uint32_t> bits(words, 0);
  IsoSpan<const uint8_t> text(payload.data(), len);
  for (uint32_t lane = 0; lane < group_lanes; ++lane) {
    const NidsChunk c = nids_chunk(len, group_lanes, lane, min_chunk);
    m.ac.scan_range(text, c.begin, c.end, [&](uint32_t p, uint32_t) { bits[p >> 5] |= 1u << (p & 31); });
  }
  auto is_matched = [&](uint32_t q) { return ((bits[q >> 5] >> (q & 31)) & 1u) != 0; };
  NidsResult lanes[32];
  for (uint32_t lane = 0; lane < group_lanes; ++lane)
    for (uint32_t w = lane; w < words; w += group_lanes)
      for (uint32_t x = bits[w]; x != 0; x &= x - 1) {
        const uint32_t q = w * 32 + uint32_t(__builtin_ctz(x));
        m.rules_fired_by(q, is_matched, [&](uint32_t r) { lanes[lane].add(r); });
      }
  NidsResult all;
  for (uint32_t lane = 0; lane < group_lanes; ++lane) all.fired += lanes[lane].fired;
  for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) {
    uint32_t min = kNidsNoRule;
    for (uint32_t lane = 0; lane < group_lanes; ++lane) min = std::min(min, lanes[lane].rules[0]);
    for (uint32_t lane = 0; lane < group_lanes; ++lane)
      lanes[lane].pop_front(min != kNidsNoRule && lanes[lane].rules[0] == min);
    all.rules[k] = min;
  }
  return all;
}

TEST(Nids, GpuLaneSplitGivesTheCpuRecord) {
  RuleSet set = read_rules_files(all_et_files());
  RuleMatcher m(set.rules);
  NidsScratch scratch(uint32_t(m.patterns().size()));
  std::vector<std::vector<uint8_t>> payloads;
  for (const std::string& trace : trace_files())
    for (const auto& frame : read_frames(trace)) payloads.push_back(payload_of(frame));
  // Payloads that fire many rules: several real rules' contents side by side.
  std::mt19937 rng(11);
  for (int n = 0; n < 300; ++n) {
    std::vector<uint8_t> p;
    for (int k = 0; k < 1 + n % 12; ++k) {
      const Rule& r = set.rules[rng() % set.rules.size()];
      for (const RuleContent& c : r.contents) {
        p.insert(p.end(), c.bytes.begin(), c.bytes.end());
        p.push_back(' ');
      }
    }
    payloads.push_back(std::move(p));
  }
  uint64_t fired = 0, overflowing = 0;
  for (size_t i = 0; i < payloads.size(); ++i) {
    const NidsResult cpu = scratch.evaluate(m.ref(), IsoSpan<const uint8_t>(payloads[i].data(),
                                                                           payloads[i].size()));
    for (uint32_t group_lanes : {4u, 8u, 16u, 32u})
      for (uint32_t chunk : {8u, kNidsSmallBatchChunk, kNidsMinChunk, 64u}) {
        const NidsResult gpu = emulate_group(m.ref(), payloads[i], group_lanes, chunk);
        ASSERT_EQ(cpu.fired, gpu.fired) << i << " lanes " << group_lanes << " chunk " << chunk;
        ASSERT_EQ(kept_rules(cpu), kept_rules(gpu)) << i << " lanes " << group_lanes << " chunk " << chunk;
      }
    const std::vector<uint32_t> reference = m.fired_rules(payloads[i]);
    ASSERT_EQ(cpu.fired, reference.size()) << i;
    ASSERT_EQ(kept_rules(cpu),
              std::vector<uint32_t>(reference.begin(), reference.begin() + cpu.kept()))
        << i;
    fired += cpu.fired;
    overflowing += cpu.fired > kNidsRulesPerPacket;
  }
  EXPECT_GT(fired, 0u);
  EXPECT_GT(overflowing, 0u);  // the merge of more than 7 was exercised
}

TEST(Nids, ConfigurationErrors) {
  auto dir = temp_dir("nids-config");
  write_file(dir / "ok.rules", kRules);
  write_file(dir / "none.rules", "# alert tcp any any -> any any (content:\"a\"; sid:1;)\n"
                                 "alert tcp any any -> any any (content:\"a\"; sid:2\n");
  auto load = [&](const std::string& yaml) {
    return Nids::from_config(ConfigNode(YAML::Load(yaml), (dir / "c.yaml").string()));
  };
  auto message = [&](const std::string& yaml) -> std::string {
    try {
      load(yaml);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("name: a\ntype: nids\n").find("rules"), std::string::npos);
  EXPECT_NE(message("name: a\nrules: ok.rules\naction: block\n").find("alert or drop"),
            std::string::npos);
  EXPECT_NE(message("name: a\nrules: ok.rules\nrulez: x\n").find("rulez"), std::string::npos);
  EXPECT_NE(message("name: a\nrules: []\n").find("rules:"), std::string::npos);
  EXPECT_NE(message("name: a\nrules: missing.rules\n").find("cannot open rule file"),
            std::string::npos);
  std::string none = message("name: a\nrules: none.rules\n");
  EXPECT_NE(none.find("no rule could be loaded"), std::string::npos) << none;
  EXPECT_NE(none.find("none.rules:2: bad_syntax"), std::string::npos) << none;
  // A list of files, relative to the config file.
  auto two = load("name: a\nrules: [ok.rules, none.rules]\naction: drop\n");
  EXPECT_EQ(two->rules().rules.size(), 4u);
  EXPECT_EQ(two->rules().stats.skipped_total(), 1u);
  const std::string d = two->describe();
  EXPECT_NE(d.find("4 rules loaded from 2 files, 1 skipped (bad_syntax 1)"), std::string::npos) << d;
  EXPECT_NE(d.find("negated content 1"), std::string::npos) << d;
  EXPECT_NE(d.find("action drop"), std::string::npos) << d;
  EXPECT_NE(d.find("first bad line: "), std::string::npos) << d;
  EXPECT_NE(two->command("sid 3").find("abc \"quoted\""), std::string::npos);
  EXPECT_NE(two->command("skipped").find("none.rules:2"), std::string::npos);
}

// `count` rules from sid `first`, one random 16-letter content each: ~15 KiB of automaton per
// rule (few prefixes shared).
std::string distinct_rules(int count, int first = 1) {
  std::mt19937 rng{uint32_t(first)};
  std::string text;
  for (int sid = first; sid < first + count; ++sid) {
    std::string content;
    for (int k = 0; k < 16; ++k) content.push_back(char('a' + rng() % 26));
    text += "alert tcp any any -> any any (msg:\"r\"; content:\"" + content +
            "\"; sid:" + std::to_string(sid) + ";)\n";
  }
  return text;
}

std::string nids_error(const std::filesystem::path& dir, const std::string& yaml) {
  try {
    Nids::from_config(ConfigNode(YAML::Load(yaml), (dir / "c.yaml").string()));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Nids, AutomatonPastMaxAutomatonMbFailsBeforeBuilding) {
  auto dir = temp_dir("nids-automaton-limit");
  write_file(dir / "r.rules", distinct_rules(200));
  const std::string m = nids_error(dir, "name: a\ntype: nids\nrules: r.rules\nmax_automaton_mb: 1\n");
  EXPECT_NE(m.find("c.yaml:3: nids a: the rules' 200 distinct contents make an automaton of "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("more than max_automaton_mb (1 MiB)"), std::string::npos) << m;
  EXPECT_EQ(nids_error(dir, "name: a\ntype: nids\nrules: r.rules\nmax_automaton_mb: 8\n"), "no error");
}

TEST(Nids, RulesPastMaxRulesFailAtTheFirstExtraRule) {
  auto dir = temp_dir("nids-rule-limit");
  write_file(dir / "a.rules", distinct_rules(2));
  write_file(dir / "b.rules", "# more\n" + distinct_rules(2, 101));
  const std::string m = nids_error(dir, "name: a\nrules: [a.rules, b.rules]\nmax_rules: 3\n");
  EXPECT_NE(m.find("b.rules:3: nids a: more than 3 rules loaded (the NF's max_rules)"), std::string::npos)
      << m;
  EXPECT_EQ(nids_error(dir, "name: a\nrules: [a.rules, b.rules]\nmax_rules: 4\n"), "no error");
}

// A whole run on a real HTTP capture: every alert line is valid JSON with the eve.json fields,
// and the log holds exactly the (packet, rule) pairs the matcher finds for that trace's packets.
TEST(Nids, ChainOnHttpTraceWritesEveJsonAlerts) {
  auto dir = temp_dir("nids-chain");
  const std::string trace = kTraceDir + "/http_with_jpegs.cap";
  std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + trace + R"(}
  - {name: out, type: discard}
nfs:
  - name: ids
    type: nids
    rules: [)" + et("web_server") + ", " + et("user_agents") + R"(]
    alerts: alerts.json
chains:
  - {from: in, path: [ids], to: out}
settings: {batch_size: 64, workers: 2}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  const auto& nids = static_cast<const Nids&>(*rc.nfs[0]);
  const nlohmann::json& rep = s.nf_reports[0];

  // Expected: for each packet, the 7 lowest rules that fire on its payload.
  std::multiset<std::pair<uint64_t, uint32_t>> want;  // (pcap_cnt, sid)
  uint64_t want_not_logged = 0;
  auto frames = read_frames(trace);
  for (size_t i = 0; i < frames.size(); ++i) {
    auto fired = nids.matcher().fired_rules(payload_of(frames[i]));
    for (size_t k = 0; k < fired.size(); ++k)
      if (k < kNidsRulesPerPacket)
        want.emplace(i + 1, nids.rules().rules[fired[k]].sid);
      else
        ++want_not_logged;
  }
  ASSERT_GT(want.size(), 100u);

  std::multiset<std::pair<uint64_t, uint32_t>> got;
  std::map<std::string, uint64_t> by_sid;
  size_t with_ports = 0;
  std::ifstream in(dir / "alerts.json");
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json a = nlohmann::json::parse(line);
    EXPECT_EQ(a["event_type"], "alert");
    EXPECT_EQ(a["proto"], "TCP");
    EXPECT_TRUE(a["src_ip"].is_string() && a["dest_ip"].is_string());
    // Ports where the packet has a TCP header (not in later IP fragments, which it holds).
    EXPECT_EQ(a.contains("src_port"), a.contains("dest_port"));
    with_ports += a.contains("src_port");
    EXPECT_EQ(a["timestamp"].get<std::string>().substr(0, 11), "2004-11-19T");
    EXPECT_EQ(a["alert"]["signature_id"], a["sid"]);
    EXPECT_EQ(a["alert"]["signature"], a["msg"]);
    EXPECT_EQ(a["alert"]["action"], "allowed");
    got.emplace(a["pcap_cnt"].get<uint64_t>(), a["sid"].get<uint32_t>());
    ++by_sid[std::to_string(a["sid"].get<uint32_t>())];
  }
  EXPECT_EQ(got, want);
  EXPECT_GT(with_ports, got.size() / 2);
  EXPECT_EQ(rep["alerts"], got.size());
  EXPECT_EQ(rep["alerts_not_logged"], want_not_logged);
  EXPECT_EQ(rep["rules_loaded"], nids.rules().rules.size());
  EXPECT_EQ(rep["patterns"], nids.matcher().patterns().size());
  EXPECT_GT(rep["dfa_states"].get<uint64_t>(), 1000u);
  for (const auto& [sid, n] : by_sid) EXPECT_EQ(rep["alerts_by_sid"][sid], n) << sid;
  EXPECT_EQ(rep["alerts_by_sid"].size(), by_sid.size());
}

}  // namespace
}  // namespace gpunfv
