// The Firewall's bit-vector classifier against two independent answers on every ClassBench set
// in data/firewall: a linear scan of the rules (the reference: first matching rule) and DPDK's
// rte_acl (bench/peers/rte_acl_peer.h; only when CMake found libdpdk). Headers: JiaChang's
// ClassBench trace (11,069 headers) and 20,000 headers generated per set from its rules.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nf/firewall/bitvector_classifier.h"
#include "tests/nf/firewall/firewall_test_util.h"

#if GPUNFV_HAVE_DPDK
#include "peers/rte_acl_peer.h"
#endif

namespace gpunfv {
namespace {

constexpr size_t kGeneratedHeaders = 20000;

uint64_t seed_of(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (char c : name) h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

// Counts the headers where `got` differs from `want`, reporting the first few.
size_t disagreements(const char* who, const std::vector<FiveTuple>& hs,
                     const std::vector<uint32_t>& want, const std::vector<uint32_t>& got) {
  size_t bad = 0;
  auto show = [](uint32_t r) { return r == kNoRule ? int64_t(-1) : int64_t(r); };
  for (size_t i = 0; i < hs.size(); ++i) {
    if (want[i] == got[i]) continue;
    if (++bad <= 5) {
      const FiveTuple& t = hs[i];
      ADD_FAILURE() << format_ipv4(t.src_addr) << " " << format_ipv4(t.dst_addr) << " "
                    << t.src_port << " " << t.dst_port << " " << int(t.proto)
                    << ": linear scan " << show(want[i]) << ", " << who << " " << show(got[i]);
    }
  }
  return bad;
}

#if GPUNFV_HAVE_DPDK
// Builds the rte_acl peer; a missing privilege skips with the EAL's message.
#define MAKE_ACL_OR_RETURN(peer, rules)                                                     \
  std::unique_ptr<RteAclPeer> peer;                                                        \
  try {                                                                                    \
    peer = std::make_unique<RteAclPeer>(rules);                                            \
  } catch (const DpdkError& e) {                                                           \
    if (e.rte_errno() == EACCES || e.rte_errno() == EPERM) GTEST_SKIP() << e.what();       \
    FAIL() << e.what();                                                                    \
  }
#endif

class ClassBenchSets : public ::testing::TestWithParam<fwtest::RuleSetFile> {};

TEST_P(ClassBenchSets, BitVectorsEqualLinearScanAndRteAcl) {
  const fwtest::RuleSetFile& set = GetParam();
  const std::vector<FiveTupleRule> rules = fwtest::load_rules(set.path);
  ASSERT_FALSE(rules.empty());
  std::vector<FiveTuple> hs = fwtest::generate_headers(rules, kGeneratedHeaders, seed_of(set.name));
  for (const auto& h : fwtest::read_trace(fwtest::jiachang_trace_path())) hs.push_back(h.tuple);

  std::vector<uint32_t> linear(hs.size());
  for (size_t i = 0; i < hs.size(); ++i) linear[i] = first_match_linear(rules, hs[i]);

  BitVectorClassifier classifier(rules);
  const BitVectorClassifierRef ref = classifier.ref();
  std::vector<uint32_t> ours(hs.size());
  for (size_t i = 0; i < hs.size(); ++i) ours[i] = ref.classify(hs[i]);
  EXPECT_EQ(disagreements("bit vectors", hs, linear, ours), 0u) << set.name;

  // The generated headers must exercise the set: most match a rule, and many different ones.
  std::set<uint32_t> distinct;
  size_t matched = 0;
  for (size_t i = 0; i < kGeneratedHeaders; ++i)
    if (linear[i] != kNoRule) ++matched, distinct.insert(linear[i]);
  EXPECT_GT(matched, kGeneratedHeaders / 2) << set.name;
  EXPECT_GT(distinct.size(), rules.size() / 4) << set.name;

  std::printf("  %-20s %5zu rules, intervals %zu/%zu/%zu/%zu/%zu, %zu vectors x %zu B, "
              "tables %.1f MiB; %zu headers, %zu of the generated matched (%zu rules)\n",
              set.name.c_str(), rules.size(), classifier.interval_count(TupleField::src_addr),
              classifier.interval_count(TupleField::dst_addr),
              classifier.interval_count(TupleField::src_port),
              classifier.interval_count(TupleField::dst_port),
              classifier.interval_count(TupleField::proto), classifier.vector_count(),
              classifier.vector_bytes(), classifier.table_bytes() / 1048576.0, hs.size(), matched,
              distinct.size());

#if GPUNFV_HAVE_DPDK
  MAKE_ACL_OR_RETURN(acl, rules);
  std::vector<uint32_t> theirs(hs.size());
  acl->classify(hs.data(), theirs.data(), hs.size());
  EXPECT_EQ(disagreements("rte_acl", hs, linear, theirs), 0u) << set.name;
  EXPECT_STRNE(acl->method(), "default") << "no classify method was accepted";

  // In place, as nf_bench runs it: pointers at the protocol byte of IPv4 headers (20 bytes)
  // followed by the ports, one rte_acl_classify call over all of them.
  std::vector<std::array<uint8_t, 24>> packets(hs.size());
  std::vector<const uint8_t*> at(hs.size());
  for (size_t i = 0; i < hs.size(); ++i) {
    uint8_t* ip = packets[i].data();
    const FiveTuple& t = hs[i];
    ip[0] = 0x45, ip[9] = t.proto;
    for (int k = 0; k < 4; ++k) {
      ip[12 + k] = uint8_t(t.src_addr >> (24 - 8 * k));
      ip[16 + k] = uint8_t(t.dst_addr >> (24 - 8 * k));
    }
    ip[20] = uint8_t(t.src_port >> 8), ip[21] = uint8_t(t.src_port);
    ip[22] = uint8_t(t.dst_port >> 8), ip[23] = uint8_t(t.dst_port);
    at[i] = ip + 9;
  }
  std::vector<uint32_t> raw(hs.size());
  acl->classify_raw(at.data(), raw.data(), hs.size());
  for (auto& r : raw) r = r == 0 ? kNoRule : r - 1;
  EXPECT_EQ(disagreements("rte_acl in place", hs, linear, raw), 0u) << set.name << ", " << acl->method();
#else
  std::printf("  (no DPDK in this build: rte_acl not compared)\n");
#endif
}

INSTANTIATE_TEST_SUITE_P(RteAclAgreement, ClassBenchSets,
                         ::testing::ValuesIn(fwtest::classbench_sets()),
                         [](const auto& info) { return info.param.name; });

// The trace's own rule column: every header matches the rule it was generated from, and the
// first matching rule is that one or an earlier one.
TEST(ClassBenchTrace, HeadersMatchTheRuleTheyWereDrawnFrom) {
  auto rules = fwtest::load_rules(fwtest::data_dir() + "/classbench_jiachang/acl1_1k");
  auto trace = fwtest::read_trace(fwtest::jiachang_trace_path());
  ASSERT_EQ(trace.size(), 11069u);
  BitVectorClassifier classifier(rules);
  size_t earlier = 0;
  for (const auto& h : trace) {
    ASSERT_LT(h.generated_from, rules.size());
    EXPECT_TRUE(rules[h.generated_from].matches(h.tuple));
    uint32_t first = classifier.ref().classify(h.tuple);
    EXPECT_LE(first, h.generated_from);
    earlier += first < h.generated_from;
  }
  std::printf("  %zu of %zu trace headers are matched first by a rule before their own\n",
              earlier, trace.size());
}

// Informational, never asserted: lookups per second of one CPU thread, ours and rte_acl's,
// over the same headers (generated from the set) for acl1 at 1k and 10k rules.
TEST(ClassBenchThroughput, Acl1OneAndTenThousandRules) {
  for (const char* file : {"/classbench_neurocuts/acl1_1k", "/classbench_neurocuts/acl1_10k.gz"}) {
    auto rules = fwtest::load_rules(fwtest::data_dir() + file);
    auto hs = fwtest::generate_headers(rules, 1 << 18, 99);
    BitVectorClassifier classifier(rules);
    const BitVectorClassifierRef ref = classifier.ref();
    std::vector<uint32_t> out(hs.size());
    auto time_it = [&](auto fn) {
      double best = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return hs.size() / best / 1e6;
    };
    double ours = time_it([&] {
      for (size_t i = 0; i < hs.size(); ++i) out[i] = ref.classify(hs[i]);
    });
    std::printf("  %-32s %5zu rules: bit vectors %.2f M lookups/s", file, rules.size(), ours);
#if GPUNFV_HAVE_DPDK
    try {
      RteAclPeer acl(rules);
      double theirs = time_it([&] { acl.classify(hs.data(), out.data(), hs.size()); });
      std::printf(", rte_acl %.2f M lookups/s", theirs);
    } catch (const DpdkError& e) {
      std::printf(", rte_acl unavailable (%s)", e.what());
    }
#endif
    std::printf(" (one thread)\n");
  }
}

}  // namespace
}  // namespace gpunfv
