// Rule files: content syntax (hex, escapes, nocase, negation), what is loaded, skipped and
// counted, and the bundled Emerging Threats files against the inventory in data/nids/README.md.
#include "nf/nids/rules_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "core/error.h"
#include "core/text_file.h"

namespace gpunfv {
namespace {

namespace fs = std::filesystem;

const std::string kEtDir = GPUNFV_SOURCE_DIR "/data/nids/et_open_2024-04-21";

Rule parse_ok(const std::string& text) {
  std::string error;
  auto r = parse_rule(text, error);
  EXPECT_TRUE(r.has_value()) << error << "\n" << text;
  return r ? *r : Rule{};
}

std::string parse_error(const std::string& text) {
  std::string error;
  auto r = parse_rule(text, error);
  EXPECT_FALSE(r.has_value()) << text;
  return error;
}

std::string rule(const std::string& options) {
  return "alert tcp $HOME_NET any -> $EXTERNAL_NET any (" + options + ")";
}

TEST(RulesFile, ContentHexEscapesAndNocase) {
  Rule r = parse_ok(rule(
      R"(msg:"a \"quoted\"\; msg"; content:"a|3a 20|b\"c\;d\\e\:f"; nocase; content:"|00|x|0D0a|"; sid:7; rev:3;)"));
  EXPECT_EQ(r.action, "alert");
  EXPECT_EQ(r.proto, "tcp");
  EXPECT_EQ(r.sid, 7u);
  EXPECT_EQ(r.rev, 3u);
  EXPECT_EQ(r.gid, 1u);
  EXPECT_EQ(r.msg, "a \"quoted\"; msg");
  ASSERT_EQ(r.contents.size(), 2u);
  EXPECT_EQ(r.contents[0].bytes, "a: b\"c;d\\e:f");
  EXPECT_TRUE(r.contents[0].nocase);
  EXPECT_EQ(r.contents[1].bytes, std::string("\0x\r\n", 4));
  EXPECT_FALSE(r.contents[1].nocase);
  EXPECT_EQ(r.unevaluated, 0);
}

TEST(RulesFile, FastPatternMarksItsContent) {
  Rule r = parse_ok(rule(R"(content:"GET "; content:"/x.php"; fast_pattern; content:"id="; sid:1;)"));
  ASSERT_EQ(r.contents.size(), 3u);
  EXPECT_FALSE(r.contents[0].fast_pattern);
  EXPECT_TRUE(r.contents[1].fast_pattern);
  EXPECT_FALSE(r.contents[2].fast_pattern);
  // Snort's forms pick the same content.
  EXPECT_TRUE(parse_ok(rule(R"(content:"ab"; fast_pattern:only; sid:2;)")).contents[0].fast_pattern);
  EXPECT_TRUE(parse_ok(rule(R"(content:"abcd"; fast_pattern:1,2; sid:3;)")).contents[0].fast_pattern);
  EXPECT_EQ(parse_error(rule(R"(fast_pattern; content:"ab"; sid:4;)")), "fast_pattern before any content");
}

TEST(RulesFile, ContentValueSyntax) {
  std::string error;
  auto c = parse_content_value(R"( ! "|41 4 2|")", error);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(c->negated);
  EXPECT_EQ(c->bytes, "AB");  // spaces may fall between a byte's two digits, as in Suricata
  EXPECT_FALSE(parse_content_value(R"("|414|")", error));
  EXPECT_NE(error.find("odd number"), std::string::npos);
  EXPECT_FALSE(parse_content_value(R"("|41")", error));
  EXPECT_NE(error.find("unterminated"), std::string::npos);
  EXPECT_FALSE(parse_content_value(R"("|4g|")", error));
  EXPECT_FALSE(parse_content_value(R"("a\nb")", error));
  EXPECT_NE(error.find("bad escape"), std::string::npos);
  EXPECT_FALSE(parse_content_value(R"("")", error));
  EXPECT_NE(error.find("empty"), std::string::npos);
  EXPECT_FALSE(parse_content_value(R"(abc)", error));
  EXPECT_FALSE(parse_content_value(R"("a"b")", error));
}

TEST(RulesFile, FeaturesThatAreNotEvaluated) {
  EXPECT_EQ(parse_ok(rule(R"(content:"a"; offset:2; depth:4; sid:1;)")).unevaluated,
            kPositionModifiers);
  EXPECT_EQ(parse_ok(rule(R"(content:"a"; pcre:"/a\;b/i"; sid:1;)")).unevaluated, kPcre);
  EXPECT_EQ(parse_ok(rule(R"(http.uri; content:"a"; sid:1;)")).unevaluated, kBuffers);
  EXPECT_EQ(parse_ok(rule(R"(content:"a"; http_uri; sid:1;)")).unevaluated, kBuffers);
  EXPECT_EQ(parse_ok(rule(R"(uricontent:"a"; sid:1;)")).unevaluated, kBuffers);
  EXPECT_EQ(parse_ok(rule(R"(dns.query; dotprefix; content:".a"; sid:1;)")).unevaluated, kBuffers);
  EXPECT_EQ(parse_ok(rule(R"(content:"a"; content:!"b"; sid:1;)")).unevaluated, kNegatedContent);
  EXPECT_EQ(parse_ok(rule(R"(flow:established,to_server; content:"a"; sid:1;)")).unevaluated,
            kOtherConditions);
  EXPECT_EQ(parse_ok(rule(R"(msg:"x"; content:"a"; fast_pattern; reference:url,x; )"
                          R"(classtype:trojan-activity; metadata:a b; sid:1; rev:1;)"))
                .unevaluated,
            0);
}

TEST(RulesFile, SyntaxErrors) {
  EXPECT_EQ(parse_error(rule(R"(content:"a";)")), "no sid");
  EXPECT_EQ(parse_error("alert tcp any any -> any any content:\"a\"; sid:1;"),
            "no (options) in parentheses");
  EXPECT_NE(parse_error("alarm tcp any any -> any any (content:\"a\"; sid:1;)").find("unknown action"),
            std::string::npos);
  EXPECT_NE(parse_error("alert tcp any any (content:\"a\"; sid:1;)").find("header"),
            std::string::npos);
  EXPECT_NE(parse_error(rule(R"(nocase; content:"a"; sid:1;)")).find("nocase"), std::string::npos);
  EXPECT_NE(parse_error(rule(R"(content:"a"; sid:x1;)")).find("bad sid"), std::string::npos);
  EXPECT_EQ(parse_error(rule(R"(content:"a"; sid:1;)") + " junk"),
            "text after the closing parenthesis");
}

TEST(RulesFile, LoadsSkipsAndCounts) {
  RuleSet set;
  add_rules_text(set, R"(# a comment line
alert tcp any any -> any any (msg:"one"; content:"abc"; sid:1;)

#alert tcp any any -> any any (msg:"disabled"; content:"x"; content:"y"; sid:2;)
# alert udp any any -> any any (msg:"disabled too"; content:!"z"; sid:3;)
drop tcp any any -> any any (msg:"drop rule"; content:"d"; sid:4;)
alert tcp any any -> any any (msg:"no content"; dsize:0; sid:5;)
alert tcp any any -> any any (msg:"negated only"; content:!"n"; sid:6;)
alert tcp any any -> any any (msg:"flowbits setter"; content:"s"; flowbits:set,a; noalert; sid:7;)
alert tcp any any -> any any (msg:"again"; content:"abc"; sid:1;)
alert tcp any any -> any any (msg:"bad"; content:"|4|"; sid:8;)
alert tcp any any -> any any (msg:"continued"; \
    content:"cont"; sid:9;)
alert http any any -> any any (msg:"two"; flow:to_server; http.uri; content:"/a"; content:!"b"; pcre:"/x/"; sid:10; rev:2;)
alert tcp any any -> any any (msg:"setter"; flowbits:set,x; flowbits: noalert; content:"q"; sid:11;)
)",
                "test.rules");
  const RulesStats& st = set.stats;
  EXPECT_EQ(st.rule_lines, 10u);
  EXPECT_EQ(st.commented_rules, 2u);
  EXPECT_EQ(st.loaded, 3u);
  EXPECT_EQ(st.skipped[int(RuleSkip::not_alert)], 1u);
  EXPECT_EQ(st.skipped[int(RuleSkip::no_content)], 1u);
  EXPECT_EQ(st.skipped[int(RuleSkip::only_negated_content)], 1u);
  EXPECT_EQ(st.skipped[int(RuleSkip::noalert)], 2u);
  EXPECT_EQ(st.skipped[int(RuleSkip::duplicate_sid)], 1u);
  EXPECT_EQ(st.skipped[int(RuleSkip::bad_syntax)], 1u);
  EXPECT_EQ(st.skipped_total() + st.loaded, st.rule_lines);
  // Not negated: abc, x, y, d, s, abc, cont, /a, q; negated: z, n, b (the bad line: none).
  EXPECT_EQ(st.content_options, 9u);
  EXPECT_EQ(st.negated_content_options, 3u);
  ASSERT_EQ(set.rules.size(), 3u);
  EXPECT_EQ(set.rules[0].sid, 1u);
  EXPECT_EQ(set.rules[0].line, 2);
  EXPECT_EQ(set.rules[0].file, "test.rules");
  EXPECT_EQ(set.rules[1].sid, 9u);
  EXPECT_EQ(set.rules[1].line, 12);  // a continued rule is named by its first line
  EXPECT_EQ(set.rules[1].contents[0].bytes, "cont");
  EXPECT_EQ(set.rules[2].sid, 10u);
  EXPECT_EQ(set.rules[2].unevaluated, kBuffers | kNegatedContent | kPcre | kOtherConditions);
  EXPECT_EQ(st.loaded_with[2], 1u);  // buffers
  bool named = false;
  for (const std::string& e : set.skip_examples)
    named |= e.rfind("test.rules:11: bad_syntax: odd number", 0) == 0;
  EXPECT_TRUE(named) << ::testing::PrintToString(set.skip_examples);
}

class RulesFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpunfv_rules_file_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RulesFiles, PlainAndGzippedFilesSidsUniqueAcrossThem) {
  std::string plain = (dir_ / "a.rules").string();
  std::ofstream(plain) << rule(R"(content:"a"; sid:1;)") << "\n";
  std::string gz = (dir_ / "b.rules.gz").string();
  std::string text = rule(R"(content:"b"; sid:2;)") + "\n" + rule(R"(content:"c"; sid:1;)") + "\n";
  gzFile out = gzopen(gz.c_str(), "wb");
  gzwrite(out, text.data(), unsigned(text.size()));
  gzclose(out);
  RuleSet set = read_rules_files({plain, gz});
  ASSERT_EQ(set.rules.size(), 2u);
  EXPECT_EQ(set.rules[1].contents[0].bytes, "b");
  EXPECT_EQ(set.rules[1].file, gz);
  EXPECT_EQ(set.stats.skipped[int(RuleSkip::duplicate_sid)], 1u);
  try {
    read_rules_files({(dir_ / "missing.rules").string()});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.rules: cannot open rule file"), std::string::npos)
        << e.what();
  }
}

// The inventory of the bundled ET Open files (data/nids/README.md, measured when the files were
// collected): active rules, commented-out rules, and content: options that are not negated
// (content:"..." and uricontent:"...") in active and commented-out rules together. The
// inventory counted the text `content:"`, which misses the few options written with a space
// (`content: "x"`, 33 in all); the test adds those back, counted in the text the same way.
struct EtCounts {
  const char* file;
  uint64_t active, commented, contents;
};
constexpr EtCounts kEtCounts[] = {
    {"emerging-activex.rules.gz", 182, 352, 1315},
    {"emerging-adware_pup.rules.gz", 657, 598, 2874},
    {"emerging-attack_response.rules.gz", 653, 100, 2113},
    {"emerging-chat.rules.gz", 67, 20, 160},
    {"emerging-coinminer.rules.gz", 26, 3, 57},
    {"emerging-current_events.rules.gz", 52, 186, 501},
    {"emerging-dns.rules.gz", 28, 21, 54},
    {"emerging-dos.rules.gz", 58, 55, 220},
    {"emerging-exploit.rules.gz", 1556, 369, 5206},
    {"emerging-exploit_kit.rules.gz", 728, 1192, 3411},
    {"emerging-ftp.rules.gz", 58, 58, 158},
    {"emerging-games.rules.gz", 23, 66, 180},
    {"emerging-hunting.rules.gz", 1154, 60, 2471},
    {"emerging-icmp.rules.gz", 0, 39, 1},
    {"emerging-icmp_info.rules.gz", 14, 52, 16},
    {"emerging-imap.rules.gz", 17, 16, 37},
    {"emerging-inappropriate.rules.gz", 0, 25, 25},
    {"emerging-info.rules.gz", 5885, 294, 6765},
    {"emerging-ja3.rules.gz", 107, 7, 115},
    {"emerging-misc.rules.gz", 21, 40, 59},
    {"emerging-mobile_malware.rules.gz", 1147, 159, 2087},
    {"emerging-netbios.rules.gz", 392, 82, 2585},
    {"emerging-p2p.rules.gz", 86, 33, 170},
    {"emerging-phishing.rules.gz", 2685, 675, 11757},
    {"emerging-policy.rules.gz", 838, 341, 1880},
    {"emerging-pop3.rules.gz", 9, 11, 20},
    {"emerging-rpc.rules.gz", 83, 34, 393},
    {"emerging-scada.rules.gz", 90, 2, 156},
    {"emerging-scan.rules.gz", 285, 77, 453},
    {"emerging-shellcode.rules.gz", 60, 126, 309},
    {"emerging-smtp.rules.gz", 17, 9, 37},
    {"emerging-snmp.rules.gz", 16, 17, 35},
    {"emerging-sql.rules.gz", 191, 120, 319},
    {"emerging-telnet.rules.gz", 8, 2, 12},
    {"emerging-tftp.rules.gz", 13, 7, 27},
    {"emerging-user_agents.rules.gz", 279, 51, 368},
    {"emerging-voip.rules.gz", 16, 5, 30},
    {"emerging-web_client.rules.gz", 499, 321, 2271},
    {"emerging-web_server.rules.gz", 643, 183, 1616},
    {"emerging-web_specific_apps.rules.gz", 4983, 761, 20581},
    {"emerging-worm.rules.gz", 9, 10, 32},
};

// Occurrences of `content:` followed by spaces and then '"' (at least one space).
uint64_t spaced_contents(const std::string& text) {
  uint64_t n = 0;
  for (size_t at = text.find("content:"); at != std::string::npos;
       at = text.find("content:", at + 1)) {
    size_t i = at + 8;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    n += i > at + 8 && i < text.size() && text[i] == '"';
  }
  return n;
}

TEST(RulesFileEt, EveryFileMatchesTheInventory) {
  if (!fs::exists(kEtDir)) GTEST_SKIP() << kEtDir << " not present";
  RulesStats total;
  uint64_t loaded = 0, spaced_total = 0;
  for (const EtCounts& e : kEtCounts) {
    const std::string path = kEtDir + "/" + e.file;
    RuleSet set = read_rules_files({path});
    const RulesStats& st = set.stats;
    EXPECT_EQ(st.rule_lines, e.active) << e.file;
    EXPECT_EQ(st.commented_rules, e.commented) << e.file;
    const uint64_t spaced = spaced_contents(read_text_file(path, "rule file"));
    EXPECT_EQ(st.content_options, e.contents + spaced) << e.file;
    spaced_total += spaced;
    // Every active line of the real rule set parses.
    EXPECT_EQ(st.skipped[int(RuleSkip::bad_syntax)], 0u)
        << e.file << ": " << ::testing::PrintToString(set.skip_examples);
    EXPECT_EQ(st.loaded + st.skipped_total(), st.rule_lines) << e.file;
    for (const Rule& r : set.rules) EXPECT_NE(r.sid, 0u) << e.file;
    total += st;
    loaded += set.rules.size();
  }
  EXPECT_EQ(total.rule_lines, 23635u);
  EXPECT_EQ(total.commented_rules, 6579u);
  EXPECT_EQ(total.content_options, 70876u + spaced_total);
  EXPECT_EQ(spaced_total, 33u);
  EXPECT_EQ(total.loaded, loaded);
  // ET Open marks every active rule `alert`; the ones without a content (ja3 hashes, dsize,
  // flowbits-only rules) are the bulk of what is skipped.
  EXPECT_EQ(total.skipped[int(RuleSkip::not_alert)], 0u);
  EXPECT_GT(total.loaded, 20000u);
}

TEST(RulesFileEt, AllFilesTogetherHaveUniqueSids) {
  if (!fs::exists(kEtDir)) GTEST_SKIP() << kEtDir << " not present";
  std::vector<std::string> paths;
  for (const EtCounts& e : kEtCounts) paths.push_back(kEtDir + "/" + e.file);
  RuleSet set = read_rules_files(paths);
  EXPECT_EQ(set.stats.skipped[int(RuleSkip::duplicate_sid)], 0u);
  EXPECT_EQ(set.stats.rule_lines, 23635u);
}

}  // namespace
}  // namespace gpunfv
