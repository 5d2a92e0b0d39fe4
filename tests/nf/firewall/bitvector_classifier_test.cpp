#include "nf/firewall/bitvector_classifier.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "tests/nf/firewall/firewall_test_util.h"

namespace gpunfv {
namespace {

Ipv4Prefix prefix(const char* text) { return *parse_ipv4_prefix(text); }
uint32_t ip(const char* text) { return *parse_ipv4(text); }

FiveTupleRule rule(const char* src, const char* dst, uint16_t sp_lo, uint16_t sp_hi,
                   uint16_t dp_lo, uint16_t dp_hi, int proto /* -1: any */) {
  FiveTupleRule r;
  r.src = prefix(src);
  r.dst = prefix(dst);
  r.src_port_lo = sp_lo;
  r.src_port_hi = sp_hi;
  r.dst_port_lo = dp_lo;
  r.dst_port_hi = dp_hi;
  r.any_proto = proto < 0;
  r.proto = proto < 0 ? 0 : uint8_t(proto);
  return r;
}

FiveTupleRule any_rule() { return rule("0.0.0.0/0", "0.0.0.0/0", 0, 65535, 0, 65535, -1); }

// Counts headers where the classifier and the linear scan disagree (reports the first few).
size_t disagreements(const std::vector<FiveTupleRule>& rules, const std::vector<FiveTuple>& hs) {
  BitVectorClassifier c(rules);
  BitVectorClassifierRef ref = c.ref();
  size_t bad = 0;
  for (const FiveTuple& t : hs) {
    uint32_t want = first_match_linear(rules, t), got = ref.classify(t);
    if (want != got && ++bad <= 5)
      ADD_FAILURE() << format_ipv4(t.src_addr) << " " << format_ipv4(t.dst_addr) << " "
                    << t.src_port << " " << t.dst_port << " " << int(t.proto) << ": linear "
                    << int64_t(want == kNoRule ? -1 : want) << ", bit vectors "
                    << int64_t(got == kNoRule ? -1 : got);
  }
  return bad;
}

TEST(BitVectorClassifier, FirstMatchingRuleWins) {
  std::vector<FiveTupleRule> rules = {
      rule("10.1.0.0/16", "0.0.0.0/0", 0, 65535, 22, 22, 6),     // 0
      rule("10.0.0.0/8", "192.168.1.0/24", 0, 65535, 0, 65535, -1),  // 1
      rule("10.0.0.0/8", "0.0.0.0/0", 1024, 65535, 80, 89, 6),   // 2
      rule("0.0.0.0/0", "0.0.0.0/0", 0, 65535, 53, 53, 17),      // 3
      any_rule(),                                                 // 4
  };
  BitVectorClassifier c(rules);
  auto ref = c.ref();
  EXPECT_EQ(ref.classify({ip("10.1.2.3"), ip("1.1.1.1"), 5000, 22, 6}), 0u);
  EXPECT_EQ(ref.classify({ip("10.1.2.3"), ip("192.168.1.9"), 5000, 22, 17}), 1u);
  EXPECT_EQ(ref.classify({ip("10.2.2.3"), ip("192.168.1.9"), 5000, 22, 6}), 1u);
  EXPECT_EQ(ref.classify({ip("10.2.2.3"), ip("8.8.8.8"), 5000, 85, 6}), 2u);
  EXPECT_EQ(ref.classify({ip("10.2.2.3"), ip("8.8.8.8"), 1023, 85, 6}), 4u);
  EXPECT_EQ(ref.classify({ip("10.2.2.3"), ip("8.8.8.8"), 1024, 89, 6}), 2u);
  EXPECT_EQ(ref.classify({ip("10.2.2.3"), ip("8.8.8.8"), 1024, 90, 6}), 4u);
  EXPECT_EQ(ref.classify({ip("11.0.0.0"), ip("8.8.8.8"), 1, 53, 17}), 3u);
  EXPECT_EQ(ref.classify({ip("11.0.0.0"), ip("8.8.8.8"), 1, 53, 6}), 4u);
  rules.pop_back();
  BitVectorClassifier without_default(rules);
  EXPECT_EQ(without_default.ref().classify({ip("11.0.0.0"), ip("8.8.8.8"), 1, 53, 6}), kNoRule);
}

TEST(BitVectorClassifier, EmptyRuleSetMatchesNothing) {
  BitVectorClassifier c(std::vector<FiveTupleRule>{});
  EXPECT_EQ(c.rule_count(), 0u);
  EXPECT_EQ(c.ref().classify({1, 2, 3, 4, 5}), kNoRule);
}

// The extreme values of every field: 0 and the maximum, /0 and /32, ranges touching the ends.
TEST(BitVectorClassifier, EdgesOfEveryField) {
  std::vector<FiveTupleRule> rules = {
      rule("255.255.255.255/32", "0.0.0.0/32", 65535, 65535, 0, 0, 255),
      rule("0.0.0.0/32", "255.255.255.255/32", 0, 0, 65535, 65535, 0),
      rule("128.0.0.0/1", "0.0.0.0/1", 0, 32767, 32768, 65535, -1),
      rule("0.0.0.0/1", "128.0.0.0/1", 32768, 65535, 0, 32767, -1),
  };
  std::vector<FiveTuple> hs;
  const uint32_t addrs[] = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};
  const uint16_t ports[] = {0, 1, 32767, 32768, 65534, 65535};
  const uint8_t protos[] = {0, 1, 6, 254, 255};
  for (uint32_t s : addrs)
    for (uint32_t d : addrs)
      for (uint16_t sp : ports)
        for (uint16_t dp : ports)
          for (uint8_t p : protos) hs.push_back({s, d, sp, dp, p});
  EXPECT_EQ(disagreements(rules, hs), 0u);
}

// More than 64 x 64 rules, so vectors have several summary words; rules built so that words
// are non-zero in every field but their AND is zero (the summary's false positives).
TEST(BitVectorClassifier, SummaryFalsePositivesAndManyWords) {
  std::vector<FiveTupleRule> rules;
  for (uint32_t i = 0; i < 5000; ++i) {
    // Alternate which field a rule constrains, so neighbouring rules share words but not
    // matches.
    FiveTupleRule r = any_rule();
    switch (i % 4) {
      case 0: r.src = Ipv4Prefix{(i << 12), 20}; break;
      case 1: r.dst = Ipv4Prefix{(i << 12), 20}; break;
      case 2: r.dst_port_lo = r.dst_port_hi = uint16_t(i); break;
      case 3: r.src_port_lo = r.src_port_hi = uint16_t(i); r.any_proto = false; r.proto = 6; break;
    }
    rules.push_back(r);
  }
  auto hs = fwtest::generate_headers(rules, 20000, 7);
  EXPECT_EQ(disagreements(rules, hs), 0u);
  BitVectorClassifier c(rules);
  EXPECT_EQ(c.vector_bytes(), (2 + 79) * 8u);  // 79 rule words, 2 summary words
}

TEST(BitVectorClassifier, IntervalsAreAtMostTwoPerRulePlusOne) {
  auto rules = fwtest::load_rules(fwtest::data_dir() + "/classbench_neurocuts/fw1_10k.gz");
  BitVectorClassifier c(rules);
  for (TupleField f : {TupleField::src_addr, TupleField::dst_addr, TupleField::src_port,
                       TupleField::dst_port, TupleField::proto})
    EXPECT_LE(c.interval_count(f), 2 * rules.size() + 1);
  EXPECT_LE(c.interval_count(TupleField::proto), 256u);
  // Many intervals share their rule set: far fewer distinct vectors than intervals.
  size_t intervals = 0;
  for (size_t f = 0; f < kTupleFields; ++f) intervals += c.interval_count(TupleField(f));
  EXPECT_LT(c.vector_count(), intervals);
}

TEST(BitVectorClassifier, TableLimitAndBadRulesThrow) {
  std::vector<FiveTupleRule> rules;
  for (uint32_t i = 0; i < 3000; ++i) {
    FiveTupleRule r = any_rule();
    r.src = Ipv4Prefix{i << 8, 24};
    rules.push_back(r);
  }
  EXPECT_THROW(BitVectorClassifier(rules, 64 * 1024), std::length_error);
  EXPECT_NO_THROW(BitVectorClassifier{rules});
  FiveTupleRule bad = any_rule();
  bad.src = Ipv4Prefix{ip("10.0.0.1"), 8};
  EXPECT_THROW(BitVectorClassifier(std::vector<FiveTupleRule>{bad}), std::invalid_argument);
  bad = any_rule();
  bad.dst_port_lo = 9;
  bad.dst_port_hi = 8;
  EXPECT_THROW(BitVectorClassifier(std::vector<FiveTupleRule>{bad}), std::invalid_argument);
  std::vector<FiveTupleRule> too_many(kMaxFirewallRules + 1, any_rule());
  EXPECT_THROW(BitVectorClassifier{too_many}, std::length_error);
}

// Random rule sets with nested prefixes and overlapping ranges against the linear scan.
TEST(BitVectorClassifier, RandomRuleSetsEqualLinearScan) {
  fwtest::Rng rng(2024);
  for (int set = 0; set < 20; ++set) {
    std::vector<FiveTupleRule> rules;
    const uint32_t n = rng.in(1, 400);
    for (uint32_t i = 0; i < n; ++i) {
      FiveTupleRule r;
      auto random_prefix = [&] {
        uint8_t len = uint8_t(rng.in(0, 4) == 0 ? rng.in(0, 32) : rng.in(8, 24));
        // Few distinct top bits, so prefixes nest and overlap.
        uint32_t a = (rng.in(0, 3) << 30) | (rng.in(0, 15) << 20) | uint32_t(rng.next() & 0xFFFFF);
        return Ipv4Prefix{len == 0 ? 0 : a & (~uint32_t(0) << (32 - len)), len};
      };
      r.src = random_prefix();
      r.dst = random_prefix();
      auto range = [&](uint16_t& lo, uint16_t& hi) {
        uint32_t kind = rng.in(0, 3);
        if (kind == 0) { lo = 0; hi = 65535; }
        else if (kind == 1) { lo = hi = uint16_t(rng.in(0, 1100)); }
        else { lo = uint16_t(rng.in(0, 2000)); hi = uint16_t(rng.in(lo, 65535)); }
      };
      range(r.src_port_lo, r.src_port_hi);
      range(r.dst_port_lo, r.dst_port_hi);
      r.any_proto = rng.in(0, 2) == 0;
      r.proto = r.any_proto ? 0 : uint8_t(rng.in(0, 2) == 0 ? rng.in(0, 255) : 6);
      rules.push_back(r);
    }
    EXPECT_EQ(disagreements(rules, fwtest::generate_headers(rules, 4000, uint64_t(set))), 0u)
        << "set " << set;
  }
}

}  // namespace
}  // namespace gpunfv
