// The NIDS's Aho-Corasick DFA and Hyperscan (bench/peers, literal mode, HS_FLAG_CASELESS for
// caseless patterns) must find the same set of patterns in every payload: every packet of every
// bundled trace, and generated payloads with real patterns planted in them (in changed case
// too), over the deduplicated patterns of real ET rules. The DFA's answer is also taken the way
// the GPU kernel takes it (8 or 32 lanes per packet, chunks with run-on), which must give the
// same set. Compiled only when CMake found libhs.
#if GPUNFV_HAVE_HYPERSCAN

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "nf/nids/nids_logic.h"
#include "nf/nids/rule_matcher.h"
#include "nf/nids/rules_file.h"
#include "peers/hyperscan_peer.h"
#include "peers/hyperscan_rules_peer.h"
#include "tests/nf/nids/nids_test_util.h"

namespace gpunfv {
namespace {

using namespace nids_testing;

using Payloads = std::vector<std::vector<uint8_t>>;

Payloads trace_payloads() {
  Payloads out;
  for (const std::string& trace : trace_files())
    for (const auto& frame : read_frames(trace)) out.push_back(payload_of(frame));
  return out;
}

// Random payloads (binary and text-like) with 1-6 of `patterns` planted in each: caseless ones
// in random case, case-sensitive ones sometimes with one letter's case flipped (then they must
// not match there), sometimes cut short by a byte (a near miss).
Payloads planted_payloads(const std::vector<Pattern>& patterns, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string text_bytes = "GET /index.php?id=1 HTTP/1.1\r\nHost: example.com\r\n\r\n";
  Payloads out;
  for (size_t n = 0; n < count; ++n) {
    std::vector<uint8_t> p(rng() % 1500);
    const bool text = rng() % 2;
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = text ? uint8_t(text_bytes[(i + n) % text_bytes.size()]) : uint8_t(rng());
    const int plants = 1 + int(rng() % 6);
    for (int k = 0; k < plants; ++k) {
      std::string pat = patterns[rng() % patterns.size()].bytes;
      const bool nocase = patterns[rng() % patterns.size()].nocase;
      for (char& c : pat)
        if (std::isalpha(uint8_t(c)) && rng() % 2 && (nocase || rng() % 8 == 0)) c ^= 0x20;
      if (rng() % 5 == 0) pat.pop_back();
      if (pat.size() > p.size()) continue;
      const size_t at = rng() % (p.size() - pat.size() + 1);
      std::copy(pat.begin(), pat.end(), p.begin() + at);
    }
    out.push_back(std::move(p));
  }
  return out;
}

// The kernel's view of a payload: `lanes` lanes over nids_chunk's chunks.
std::vector<uint32_t> chunked_matches(const AhoCorasickRef& ac, std::span<const uint8_t> payload,
                                      uint32_t lanes) {
  const uint32_t len = uint32_t(payload.size());
  std::vector<uint32_t> ids;
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const NidsChunk c = nids_chunk(len, lanes, lane);
    ac.scan_range(IsoSpan<const uint8_t>(payload.data(), len), c.begin, c.end,
                  [&](uint32_t p, uint32_t) { ids.push_back(p); });
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

struct Agreement {
  size_t payloads = 0, with_matches = 0, matches = 0, disagreements = 0;
};

Agreement compare(const AhoCorasick& ac, const HyperscanPeer& hs, const Payloads& payloads,
                  const std::vector<Pattern>& patterns, const char* label) {
  Agreement a;
  for (size_t i = 0; i < payloads.size(); ++i) {
    std::span<const uint8_t> p(payloads[i]);
    const std::vector<uint32_t> ours = ac.matched_patterns(p);
    const std::vector<uint32_t> theirs = hs.matched_patterns(p);
    const std::vector<uint32_t> lanes = chunked_matches(ac.ref(), p, 32);
    const std::vector<uint32_t> lanes8 = chunked_matches(ac.ref(), p, 8);
    ++a.payloads;
    a.with_matches += !ours.empty();
    a.matches += ours.size();
    if (ours != theirs || lanes != ours || lanes8 != ours) {
      if (++a.disagreements <= 5) {
        std::string diff;
        for (uint32_t id : ours)
          if (!std::binary_search(theirs.begin(), theirs.end(), id))
            diff += " +" + std::to_string(id) + "'" + patterns[id].bytes + "'";
        for (uint32_t id : theirs)
          if (!std::binary_search(ours.begin(), ours.end(), id))
            diff += " -" + std::to_string(id) + "'" + patterns[id].bytes + "'";
        ADD_FAILURE() << label << " payload " << i << ": dfa " << ours.size() << " ids, hyperscan "
                      << theirs.size() << ", lanes " << lanes.size() << ":" << diff;
      }
    }
  }
  std::printf("[ hyperscan ] %s: %zu patterns, %zu payloads, %zu with matches, %zu "
              "(payload, pattern) matches, %zu disagreements\n",
              label, patterns.size(), a.payloads, a.with_matches, a.matches, a.disagreements);
  return a;
}

// Returns the number of patterns compared.
size_t check_rule_files(const std::vector<std::string>& files, size_t planted, const char* label) {
  RuleSet set = read_rules_files(files);
  RuleMatcher m(set.rules);
  const std::vector<Pattern>& patterns = m.patterns().patterns();
  HyperscanPeer hs(patterns);
  const Agreement traces = compare(m.automaton(), hs, trace_payloads(), patterns, label);
  EXPECT_EQ(traces.disagreements, 0u);
  EXPECT_GT(traces.payloads, 5000u);
  EXPECT_GT(traces.with_matches, 0u);
  const Agreement gen =
      compare(m.automaton(), hs, planted_payloads(patterns, planted, 7), patterns, label);
  EXPECT_EQ(gen.disagreements, 0u);
  EXPECT_GT(gen.with_matches, planted / 2);
  return patterns.size();
}

TEST(HyperscanAgreement, SeveralEtFiles) {
  const std::vector<std::string> files = {et("exploit"), et("web_server"), et("attack_response"),
                                          et("scan"), et("policy"), et("user_agents")};
  EXPECT_GE(check_rule_files(files, 4000, "6 ET files"), 2000u);
}

// Suricata's way (bench/peers/hyperscan_rules_peer.h: fast pattern per rule, other contents
// verified) fires exactly the rules our matcher fires, on every trace payload and on planted
// payloads, from two threads' scratch.
TEST(HyperscanAgreement, RulesFiredAsSuricataMatchesOurs) {
  RuleSet set = read_rules_files({et("web_server"), et("user_agents"), et("policy")});
  RuleMatcher m(set.rules);
  HyperscanRulesPeer hs(m, 2);
  EXPECT_GT(hs.fast_patterns(), 100u);
  EXPECT_GT(hs.verify_patterns(), 100u);
  Payloads payloads = trace_payloads();
  for (auto& p : planted_payloads(m.patterns().patterns(), 3000, 11)) payloads.push_back(std::move(p));
  size_t fired = 0, bad = 0;
  for (size_t i = 0; i < payloads.size(); ++i) {
    const std::span<const uint8_t> text(payloads[i]);
    const size_t ours = m.fired_rules(text).size();
    const uint32_t theirs = hs.rules_fired(text, unsigned(i % 2));
    fired += ours;
    if (ours != theirs && ++bad <= 5)
      ADD_FAILURE() << "payload " << i << ": ours " << ours << " rules, Hyperscan " << theirs;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(fired, 0u);  // the payloads do fire rules
}

TEST(HyperscanAgreement, AllEtFiles) {
  EXPECT_GE(check_rule_files(all_et_files(), 2000, "all ET files"), 20000u);
}

}  // namespace
}  // namespace gpunfv

#endif  // GPUNFV_HAVE_HYPERSCAN
