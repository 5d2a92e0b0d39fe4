// The Aho-Corasick DFA against a naive search: every occurrence of every pattern (case-sensitive
// and caseless mixed), for whole texts and for texts cut into chunks of every size (the GPU
// kernel's split), where each occurrence must be reported exactly once.
#include "nf/nids/aho_corasick.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpunfv {
namespace {

using Occurrences = std::vector<std::pair<uint32_t, uint32_t>>;  // (pattern, end), sorted

IsoSpan<const uint8_t> span_of(const std::string& s) {
  return IsoSpan<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

Occurrences naive(const std::vector<Pattern>& pats, const std::string& text) {
  Occurrences out;
  for (uint32_t p = 0; p < pats.size(); ++p) {
    const std::string& pat = pats[p].bytes;
    for (size_t start = 0; start + pat.size() <= text.size(); ++start) {
      bool eq = true;
      for (size_t k = 0; eq && k < pat.size(); ++k) {
        uint8_t a = uint8_t(text[start + k]), b = uint8_t(pat[k]);
        eq = pats[p].nocase ? ascii_fold(a) == ascii_fold(b) : a == b;
      }
      if (eq) out.emplace_back(p, uint32_t(start + pat.size() - 1));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Occurrences scanned(const AhoCorasick& ac, const std::string& text) {
  Occurrences out;
  ac.ref().scan(span_of(text), [&](uint32_t p, uint32_t end) { out.emplace_back(p, end); });
  std::sort(out.begin(), out.end());
  return out;
}

// The text cut into chunks of `chunk` bytes, each scanned on its own (as a GPU lane does).
Occurrences chunked(const AhoCorasick& ac, const std::string& text, uint32_t chunk) {
  Occurrences out;
  for (uint32_t b = 0; b < text.size(); b += chunk) {
    const uint32_t e = std::min<uint32_t>(b + chunk, uint32_t(text.size()));
    ac.ref().scan_range(span_of(text), b, e, [&](uint32_t p, uint32_t end) {
      out.emplace_back(p, end);
    });
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Pattern> canonical(const std::vector<std::pair<std::string, bool>>& raw) {
  std::vector<Pattern> out;
  for (const auto& [bytes, nocase] : raw) out.push_back(canonical_pattern(bytes, nocase));
  return out;
}

TEST(AhoCorasick, ClassicExample) {
  std::vector<Pattern> pats = canonical({{"he", false}, {"she", false}, {"his", false},
                                         {"hers", false}});
  AhoCorasick ac(pats);
  EXPECT_EQ(ac.state_count(), 10u);  // root, h, he, her, hers, hi, his, s, sh, she
  EXPECT_EQ(ac.max_pattern_length(), 4u);
  Occurrences want = {{0, 3}, {1, 3}, {3, 5}};  // u[she]rs: she and he end at 3, hers at 5
  EXPECT_EQ(scanned(ac, "ushers"), want);
  EXPECT_EQ(naive(pats, "ushers"), want);
}

TEST(AhoCorasick, CanonicalPatternsDeduplicate) {
  PatternSet set;
  uint32_t a = set.add("AbC", true);
  EXPECT_EQ(set.add("abc", true), a);
  EXPECT_EQ(set[a].bytes, "abc");
  uint32_t exact_upper = set.add("ABC", false), exact_lower = set.add("abc", false);
  EXPECT_NE(exact_upper, a);
  EXPECT_NE(exact_lower, a);
  EXPECT_NE(exact_upper, exact_lower);
  // Caseless changes nothing for a pattern without letters: one pattern.
  uint32_t digits = set.add("|12|", true);
  EXPECT_EQ(set.add("|12|", false), digits);
  EXPECT_FALSE(set[digits].nocase);
  EXPECT_EQ(set.size(), 4u);
  EXPECT_THROW(set.add("", false), std::invalid_argument);
}

TEST(AhoCorasick, MixedCaseSensitivity) {
  // Same folded string three ways: exact "Abc", exact "abc", caseless "abc".
  std::vector<Pattern> pats = canonical({{"Abc", false}, {"abc", false}, {"ABC", true}});
  AhoCorasick ac(pats);
  const std::string text = "ABC abc Abc aBc";
  Occurrences want = {{0, 10}, {1, 6}, {2, 2}, {2, 6}, {2, 10}, {2, 14}};
  EXPECT_EQ(scanned(ac, text), want);
  EXPECT_EQ(naive(pats, text), want);
  // Upper-case columns are the lower-case ones: no fold at scan time.
  for (uint32_t s = 0; s < ac.state_count(); ++s)
    for (int c = 'A'; c <= 'Z'; ++c) ASSERT_EQ(ac.transition(s, uint8_t(c)), ac.transition(s, uint8_t(c + 32)));
}

TEST(AhoCorasick, NestedPatternsAndBinaryBytes) {
  std::vector<Pattern> pats = canonical({{"abcd", false}, {"bcd", false}, {"cd", false},
                                         {"d", false}, {std::string("\0\xff", 2), false},
                                         {"abcdabcd", false}});
  AhoCorasick ac(pats);
  const std::string text = std::string("abcdabcd\0\xff\0", 11);
  EXPECT_EQ(scanned(ac, text), naive(pats, text));
  EXPECT_EQ(ac.matched_patterns(std::span<const uint8_t>(
                reinterpret_cast<const uint8_t*>(text.data()), text.size())),
            (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(AhoCorasick, EmptySetAndLimits) {
  AhoCorasick empty(std::vector<Pattern>{});
  EXPECT_EQ(empty.state_count(), 1u);
  EXPECT_TRUE(scanned(empty, "anything").empty());
  std::vector<Pattern> too_long = {Pattern{std::string(ac::kMaxPatternBytes + 1, 'a'), false}};
  EXPECT_THROW(AhoCorasick{too_long}, std::length_error);
}

// Random pattern sets over a small alphabet (so occurrences overlap a lot), random texts: the
// automaton equals the naive search, and every chunking reports each occurrence once.
TEST(AhoCorasick, RandomSetsEqualNaiveSearchWholeAndChunked) {
  std::mt19937 rng(20240421);
  const std::string alphabet = std::string("abAB\0\xff.", 7);
  auto pick = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    return s;
  };
  for (int round = 0; round < 60; ++round) {
    PatternSet set;
    const int n_patterns = 1 + int(rng() % 40);
    for (int i = 0; i < n_patterns; ++i) set.add(pick(1 + rng() % 7), rng() % 2);
    AhoCorasick ac(set.patterns());
    for (int t = 0; t < 10; ++t) {
      const std::string text = pick(rng() % 200);
      const Occurrences want = naive(set.patterns(), text);
      ASSERT_EQ(scanned(ac, text), want) << "round " << round;
      for (uint32_t chunk : {1u, 2u, 3u, 5u, 8u, 13u, 32u, 64u})
        ASSERT_EQ(chunked(ac, text, chunk), want) << "round " << round << " chunk " << chunk;
    }
  }
}

// The state count a rule set is judged by before building equals the built automaton's, case
// folding and shared prefixes included; the build estimate covers at least the tables.
TEST(AhoCorasick, StateCountKnownBeforeBuilding) {
  std::mt19937 rng(7);
  const std::string alphabet = "abAB.";
  for (int round = 0; round < 40; ++round) {
    PatternSet set;
    for (int i = 0, n = 1 + int(rng() % 30); i < n; ++i) {
      std::string s;
      for (size_t k = 0, len = 1 + rng() % 8; k < len; ++k) s.push_back(alphabet[rng() % alphabet.size()]);
      set.add(s, rng() % 2);
    }
    AhoCorasick ac(set.patterns());
    ASSERT_EQ(AhoCorasick::state_count_of(set.patterns()), ac.state_count()) << "round " << round;
    ASSERT_GE(AhoCorasick::build_bytes_of(set.patterns()), ac.table_bytes()) << "round " << round;
  }
  EXPECT_EQ(AhoCorasick::state_count_of(std::vector<Pattern>{}), 1u);
}

// A chunk never reads more than (longest pattern - 1) bytes past its end.
TEST(AhoCorasick, ChunkRunOnIsBoundedByLongestPattern) {
  std::vector<Pattern> pats = canonical({{"aaaaaaaa", false}, {"ab", false}});
  AhoCorasick ac(pats);
  std::string text(100, 'a');
  // All 'a': the automaton stays deep, so only the bound stops the run-on.
  uint32_t max_end = 0;
  ac.ref().scan_range(span_of(text), 10, 20, [&](uint32_t, uint32_t end) {
    max_end = std::max(max_end, end);
  });
  EXPECT_EQ(max_end, 19u + 7u);  // an occurrence starting at 19 ends at 26 = 20 + 8 - 2
  Occurrences all = chunked(ac, text, 10);
  EXPECT_EQ(all, naive(pats, text));
}

// A transition table whose entries name states past it (a corrupt or hostile table) is refused
// when it is handed out: a DFA walk takes no check per step.
TEST(AhoCorasick, TransitionsPastTheTableAreRefusedWhenHandedOut) {
  const uint32_t states = 2;
  std::vector<uint32_t> delta(states * 256, 1);
  delta[256 + 'x'] = 5000;  // 'x' from state 1: far past the table
  using Transitions = AhoCorasickRef::Transitions;
  EXPECT_THROW(Transitions(IsoSpan<const uint32_t>(delta.data(), delta.size()), delta), std::invalid_argument);
  delta[256 + 'x'] = 1 | ac::kHasOutput;  // the flag is not part of the row
  EXPECT_NO_THROW(Transitions(IsoSpan<const uint32_t>(delta.data(), delta.size()), delta));
  delta.pop_back();  // a partial row
  EXPECT_THROW(Transitions(IsoSpan<const uint32_t>(delta.data(), delta.size()), delta), std::invalid_argument);
}

// A state naming output rows past the table is refused when the tables are handed out: a
// scan reads a state's outputs with no check.
TEST(AhoCorasick, OutputsPastTheTableAreRefusedWhenHandedOut) {
  const uint32_t states = 2;
  std::vector<uint32_t> delta(states * 256, 0);
  delta['w'] = 1 | ac::kHasOutput;                // 'w' from the root ends state 1's outputs
  std::vector<uint32_t> outputs = {2, 2, 2, 5000,  // state 1: rows [2, 5000), past the table
                                   0, 1};          // row 2: pattern 0, 1 byte
  const AhoCorasickRef::Transitions dfa(IsoSpan<const uint32_t>(delta.data(), delta.size()), delta);
  auto automaton = [&] {
    return AhoCorasickRef::Automaton(dfa, IsoSpan<const uint32_t>(outputs.data(), outputs.size()), outputs);
  };
  EXPECT_THROW(automaton(), std::invalid_argument);
  outputs[3] = 3;  // state 1: row 2
  const std::vector<uint16_t> depth = {0, 1};
  const std::vector<uint32_t> pat_len = {1}, pat_off = {0};
  const std::vector<uint8_t> pat_bytes = {'w'};
  const AhoCorasickRef ref(automaton(), IsoSpan<const uint16_t>(depth.data(), depth.size()),
                           IsoSpan<const uint32_t>(pat_len.data(), pat_len.size()),
                           IsoSpan<const uint32_t>(pat_off.data(), pat_off.size()),
                           IsoSpan<const uint8_t>(pat_bytes.data(), pat_bytes.size()), 1);
  std::vector<uint32_t> found;
  ref.scan(span_of("awaw"), [&](uint32_t p, uint32_t end) { found.push_back(p * 100 + end); });
  EXPECT_EQ(found, (std::vector<uint32_t>{1, 3}));
}

}  // namespace
}  // namespace gpunfv
