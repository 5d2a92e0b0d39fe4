#include "nf/firewall/classbench_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <map>
#include <string>

#include "core/error.h"
#include "tests/chain/chain_test_util.h"
#include "tests/nf/firewall/firewall_test_util.h"

namespace gpunfv {
namespace {

Ipv4Prefix prefix(const char* text) { return *parse_ipv4_prefix(text); }

// The ConfigError message parse_classbench gives for `text`, or "" if it parses.
std::string error_of(const std::string& text) {
  try {
    parse_classbench(text, "rules.txt");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ClassBenchFile, ParsesTheStandardForm) {
  auto rules = parse_classbench(
      "@176.19.181.33/32\t90.145.23.0/24\t0 : 65535\t1550 : 1550\t0x06/0xFF\t0x0000/0x0200\t\n"
      "@0.0.0.0/0\t10.0.0.0/8\t1024 : 2048\t0 : 65535\t0x00/0x00\t0x1000/0x1000\n",
      "x");
  ASSERT_EQ(rules.size(), 2u);
  const FiveTupleRule& a = rules[0].match;
  EXPECT_EQ(a.src, prefix("176.19.181.33/32"));
  EXPECT_EQ(a.dst, prefix("90.145.23.0/24"));
  EXPECT_EQ(a.src_port_lo, 0);
  EXPECT_EQ(a.src_port_hi, 65535);
  EXPECT_EQ(a.dst_port_lo, 1550);
  EXPECT_EQ(a.dst_port_hi, 1550);
  EXPECT_EQ(a.proto, 6);
  EXPECT_FALSE(a.any_proto);
  EXPECT_FALSE(rules[0].action.has_value());
  EXPECT_EQ(rules[0].file_line, 1);
  const FiveTupleRule& b = rules[1].match;
  EXPECT_EQ(b.src, prefix("0.0.0.0/0"));
  EXPECT_TRUE(b.any_proto);
  EXPECT_EQ(b.src_port_lo, 1024);
  EXPECT_EQ(b.src_port_hi, 2048);
}

TEST(ClassBenchFile, ActionsCommentsBlankLinesAndCompactRanges) {
  auto rules = parse_classbench(
      "# hand-written\n"
      "\n"
      "@10.0.0.0/8 0.0.0.0/0 0 : 65535 22 : 22 0x06/0xFF 0x0000/0x0000 drop\n"
      "@0.0.0.0/0 0.0.0.0/0 0:65535 53:53 17/255 accept   # no flags field, decimal proto\n"
      "@0.0.0.0/0 0.0.0.0/0 0 :65535 0: 65535 0x00/0x00\n",
      "x");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].action, FirewallAction::drop);
  EXPECT_EQ(rules[0].file_line, 3);
  EXPECT_EQ(rules[1].action, FirewallAction::accept);
  EXPECT_EQ(rules[1].match.proto, 17);
  EXPECT_EQ(rules[1].match.dst_port_lo, 53);
  EXPECT_FALSE(rules[2].action.has_value());
  EXPECT_EQ(rules[2].file_line, 5);
}

TEST(ClassBenchFile, EmptyTextHasNoRules) {
  EXPECT_TRUE(parse_classbench("", "x").empty());
  EXPECT_TRUE(parse_classbench("# nothing\n\n  \n", "x").empty());
}

TEST(ClassBenchFile, ErrorsNameFileAndLine) {
  const std::string ok = "@1.2.3.0/24 5.6.7.8/32 0 : 65535 80 : 80 0x06/0xFF 0x0000/0x0000";
  EXPECT_EQ(error_of(ok), "");
  struct Case {
    std::string line, expect;
  };
  const Case cases[] = {
      {"@1.2.3/24 5.6.7.8/32 0 : 65535 80 : 80 0x06/0xFF", "bad source prefix '1.2.3/24'"},
      {"@1.2.3.0/24 5.6.7.800/32 0 : 65535 80 : 80 0x06/0xFF", "bad destination prefix"},
      {"@1.2.3.0/33 5.6.7.8/32 0 : 65535 80 : 80 0x06/0xFF", "has length 33, above 32"},
      {"@1.2.3.4/24 5.6.7.8/32 0 : 65535 80 : 80 0x06/0xFF", "host bits set (did you mean 1.2.3.0/24?)"},
      {"@1.2.3.0/24 5.6.7.8/32 90 : 80 80 : 80 0x06/0xFF", "low end above its high end"},
      {"@1.2.3.0/24 5.6.7.8/32 0 : 65536 80 : 80 0x06/0xFF", "goes above 65535"},
      {"@1.2.3.0/24 5.6.7.8/32 0 - 65535 80 : 80 0x06/0xFF 0x0/0x0", "expected lo : hi"},
      {"@1.2.3.0/24 5.6.7.8/32 0 : 65535 80 : 80 0x06/0x0F", "protocol mask in '0x06/0x0F' is not supported"},
      {"@1.2.3.0/24 5.6.7.8/32 0 : 65535 80 : 80 0x106/0xFF", "bad protocol '0x106/0xFF'"},
      {"@1.2.3.0/24 5.6.7.8/32 0 : 65535 80 : 80 tcp", "bad protocol 'tcp'"},
      {ok + " reject", "unknown action 'reject' (expected accept or drop)"},
      {"@1.2.3.0/24 5.6.7.8/32 0 : 65535 80 : 80 0x06/0xFF 0x0/0xZZ", "bad TCP flags field '0x0/0xZZ'"},
      {ok + " drop extra", "unexpected 'extra' after the rule"},
      {"@1.2.3.0/24 5.6.7.8/32 0 : 65535", "got 5 fields"},
  };
  for (const Case& c : cases) {
    std::string m = error_of("# header\n" + ok + "\n" + c.line + "\n");
    EXPECT_EQ(m.rfind("rules.txt:3: ", 0), 0u) << c.line << " -> " << m;
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.line << " -> " << m;
  }
}

TEST(ClassBenchFile, RuleCountLimit) {
  const std::string line = "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n";
  std::string text;
  text.reserve(line.size() * (kMaxFirewallRules + 1));
  for (size_t i = 0; i < kMaxFirewallRules; ++i) text += line;
  EXPECT_EQ(parse_classbench(text, "x").size(), kMaxFirewallRules);
  text += line;
  std::string m = error_of(text);
  EXPECT_NE(m.find("rules.txt:" + std::to_string(kMaxFirewallRules + 1) + ": more than 65536 rules"),
            std::string::npos)
      << m;
}

TEST(ClassBenchFile, ConfiguredRuleCountLimit) {
  const std::string line = "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n";
  EXPECT_EQ(parse_classbench(line + "# not a rule\n" + line, "x", 2).size(), 2u);
  try {
    parse_classbench(line + "# not a rule\n" + line + line, "rules.txt", 2);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rules.txt:4: more than 2 rules (the firewall's max_rules)", 0), 0u)
        << e.what();
  }
}

TEST(ClassBenchFile, ReadsGzipAndNamesMissingFiles) {
  auto dir = testing::temp_dir("classbench-gz");
  std::string path = (dir / "r.gz").string();
  gzFile gz = gzopen(path.c_str(), "wb");
  const char text[] = "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n";
  gzwrite(gz, text, sizeof text - 1);
  gzclose(gz);
  auto rules = read_classbench_file(path);
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].match.proto, 17);
  EXPECT_EQ(rules[0].action, FirewallAction::drop);
  try {
    read_classbench_file((dir / "missing").string());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("missing: cannot open rule file"), std::string::npos)
        << e.what();
  }
}

// The bundled sets parse whole, with the rule counts data/firewall/README.md gives.
TEST(ClassBenchFile, BundledSetsHaveTheirDocumentedRuleCounts) {
  const std::map<std::string, size_t> expected = {
      {"neurocuts_acl1_1k", 942},  {"neurocuts_acl1_10k", 9774}, {"neurocuts_acl2_1k", 961},
      {"neurocuts_acl2_10k", 9476}, {"neurocuts_acl3_1k", 990},  {"neurocuts_acl3_10k", 9419},
      {"neurocuts_acl4_1k", 990},  {"neurocuts_acl4_10k", 9591}, {"neurocuts_acl5_1k", 933},
      {"neurocuts_acl5_10k", 7298}, {"neurocuts_fw1_1k", 857},   {"neurocuts_fw1_10k", 9379},
      {"neurocuts_fw2_1k", 971},   {"neurocuts_fw2_10k", 9655},  {"neurocuts_fw3_1k", 799},
      {"neurocuts_fw3_10k", 9037}, {"neurocuts_fw4_1k", 847},    {"neurocuts_fw4_10k", 8775},
      {"neurocuts_ipc1_1k", 974},  {"neurocuts_ipc1_10k", 9518}, {"jiachang_acl1_1k", 953}};
  for (const auto& set : fwtest::classbench_sets()) {
    auto rules = read_classbench_file(set.path);
    EXPECT_EQ(rules.size(), expected.at(set.name)) << set.name;
    for (const auto& r : rules) ASSERT_FALSE(r.action.has_value()) << set.name;
  }
}

}  // namespace
}  // namespace gpunfv
