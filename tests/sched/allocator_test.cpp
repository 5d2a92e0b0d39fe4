// The scheduler's allocation rule (G-NET section 5.3, Eq. 3-4) on given models: answers worked
// out by hand for small cases, then properties over many generated models.
#include "sched/allocator.h"

#include <gtest/gtest.h>

#include "core/splitmix64.h"

namespace gpunfv {
namespace {

// Kernel time per packet on one SM k1, fixed cost b1, no transfer: T(N, B0) = N B0 / (k1 B0 + b1).
NfModel kernel_only(double k1, double b1) { return NfModel{k1, b1, 0, 0}; }

SchedParams exact(double P) {
  SchedParams p;
  p.latency_bound_s = 1e-3;
  p.P = P;
  p.C_s = 0;
  p.refine = false;
  return p;
}

TEST(Allocator, ParsesPolicies) {
  EXPECT_EQ(parse_scheduler_policy("gnet"), SchedulerPolicy::gnet);
  EXPECT_EQ(parse_scheduler_policy("fair"), SchedulerPolicy::fair);
  EXPECT_EQ(parse_scheduler_policy("unco"), SchedulerPolicy::unco);
  EXPECT_EQ(parse_scheduler_policy("temporal"), SchedulerPolicy::temporal);
  EXPECT_THROW(parse_scheduler_policy("GNET"), std::invalid_argument);
  EXPECT_THROW(parse_scheduler_policy(""), std::invalid_argument);
  EXPECT_EQ(scheduler_policy_name(SchedulerPolicy::unco), "unco");
}

TEST(Allocator, Equations3And4ByHand) {
  SchedParams p;  // bound 1 ms, C = 20 us
  NfModel m{1e-6, 10e-6, 0.1e-6, 5e-6};
  // Largest B0 on 4 SMs: (1000 - 10 - 5 - 20) us / (1 + 0.4) us = 689.3 -> 689.
  EXPECT_EQ(max_per_sm_batch(m, 4, p), 689u);
  // Eq. 3 for 2 Mpps on 4 SMs: 2e6 * 35e-6 / (4 - 2e6 * 1.4e-6) = 70 / 1.2 = 58.3 -> 59.
  EXPECT_EQ(min_per_sm_batch(m, 4, 2e6, p), 59u);
  EXPECT_GE(m.throughput_pps(4, 59, p.C_s), 2e6);
  EXPECT_LT(m.throughput_pps(4, 58, p.C_s), 2e6);
  // 4 SMs cannot reach 1 / 1.4e-6 * 4 = 2.86 Mpps at any batch (Eq. 3's denominator <= 0).
  EXPECT_EQ(min_per_sm_batch(m, 4, 2.9e6, p), 0u);
  // max_batch caps B0 * N.
  p.max_batch = 1000;
  EXPECT_EQ(max_per_sm_batch(m, 4, p), 250u);
}

// Two NFs a (k1 = 1 us) and b (k1 = 2 us), both b1 = 10 us, on 4 SMs in steps of 1, P = 0.5:
//  round 0, one SM each, largest batch within 1 ms: a 990 (990 kpps), b 495 (495 kpps): T' = 495k.
//  round 1, T = 742.5 kpps: a on 1 SM: B0 = ceil(7.425 / 0.2575) = 29 (743.6 kpps);
//           b needs 2 SMs: B0 = ceil(7.425 / 0.515) = 15, batch 30 (750 kpps). 3 SMs, fits.
//  round 2, T = 1.1154 Mpps: a 2 SMs, b 3 SMs = 5 > 4: stop; round 1 is the answer.
std::vector<SchedNode> two_nfs() {
  return {{"a", kernel_only(1e-6, 10e-6), {1}, 1.0}, {"b", kernel_only(2e-6, 10e-6), {}, 1.0}};
}

TEST(Allocator, GnetRoundsByHand) {
  Allocation a = allocate(SchedulerPolicy::gnet, two_nfs(), 0, {4, 1, 1}, exact(0.5));
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.rounds, 1);
  EXPECT_EQ(a.nodes[0].sms, 1);
  EXPECT_EQ(a.nodes[0].batch, 29u);
  EXPECT_EQ(a.nodes[1].sms, 2);
  EXPECT_EQ(a.nodes[1].batch, 30u);
  EXPECT_NEAR(a.nodes[0].throughput_pps, 29 / 39e-6, 1e-3);
  EXPECT_NEAR(a.nodes[1].throughput_pps, 750000, 1e-3);
  EXPECT_NEAR(a.nodes[1].latency_s, 40e-6, 1e-12);
  EXPECT_NEAR(a.chain_pps, 29 / 39e-6, 1e-3);
  EXPECT_EQ(a.sms_used, 3);
  EXPECT_FALSE(a.serialize);
}

TEST(Allocator, GnetRefineUsesTheLastStep) {
  // The best any split of 4 SMs does is 990 kpps (a on 1 SM at its 1 ms batch, or b on 2 SMs);
  // refinement gets there from round 1's 743.6 kpps, and equals fair's 2 + 2 here.
  SchedParams p = exact(0.5);
  p.refine = true;
  Allocation a = allocate(SchedulerPolicy::gnet, two_nfs(), 0, {4, 1, 1}, p);
  EXPECT_EQ(a.rounds, 1);
  EXPECT_GT(a.chain_pps, 990000 * (1 - 1e-5));
  EXPECT_LE(a.chain_pps, 990000 * (1 + 1e-9));
  EXPECT_LE(a.sms_used, 4);
  Allocation f = allocate(SchedulerPolicy::fair, two_nfs(), 0, {4, 1, 1}, p);
  EXPECT_EQ(f.nodes[0].sms, 2);
  EXPECT_EQ(f.nodes[1].sms, 2);
  EXPECT_EQ(f.nodes[1].batch, 990u);  // 495 per SM
  EXPECT_NEAR(f.chain_pps, 990000, 1e-3);
}

TEST(Allocator, BaselinesByHand) {
  SchedParams p = exact(0.5);
  Allocation u = allocate(SchedulerPolicy::unco, two_nfs(), 0, {4, 1, 1}, p);
  EXPECT_EQ(u.nodes[0].sms, 0);
  EXPECT_EQ(u.nodes[1].sms, 0);
  EXPECT_EQ(u.nodes[0].batch, 990u * 4);  // as if alone on all 4 SMs
  EXPECT_FALSE(u.serialize);
  EXPECT_EQ(u.chain_pps, 0);
  Allocation t = allocate(SchedulerPolicy::temporal, two_nfs(), 0, {4, 1, 1}, p);
  EXPECT_TRUE(t.serialize);
  EXPECT_EQ(t.nodes[1].sms, 0);
  // Alone on 4 SMs: a 3.96 Mpps, b 1.98 Mpps; one at a time: 1 / (1/3.96M + 1/1.98M) = 1.32M.
  EXPECT_NEAR(t.chain_pps, 1.32e6, 1);
}

TEST(Allocator, InfeasibleLatencyBound) {
  SchedParams p = exact(0.1);
  p.latency_bound_s = 5e-6;  // below b1 = 10 us: not even one packet fits
  for (auto pol : {SchedulerPolicy::gnet, SchedulerPolicy::fair, SchedulerPolicy::temporal,
                   SchedulerPolicy::unco}) {
    Allocation a = allocate(pol, two_nfs(), 0, {4, 1, 1}, p);
    EXPECT_EQ(a.chain_pps, 0) << scheduler_policy_name(pol);
    EXPECT_NE(a.explain.find("infeasible"), std::string::npos) << a.explain;
    ASSERT_EQ(a.nodes.size(), 2u);
    EXPECT_EQ(a.nodes[0].batch, 0u);
  }
}

TEST(Allocator, TooFewSmsForTheNfs) {
  std::vector<SchedNode> three = {{"a", kernel_only(1e-6, 1e-5), {1}},
                                  {"b", kernel_only(1e-6, 1e-5), {2}},
                                  {"c", kernel_only(1e-6, 1e-5), {}}};
  Allocation a = allocate(SchedulerPolicy::gnet, three, 0, {16, 8, 8}, SchedParams{});
  EXPECT_EQ(a.chain_pps, 0);
  EXPECT_NE(a.explain.find("infeasible"), std::string::npos);
  Allocation f = allocate(SchedulerPolicy::fair, three, 0, {16, 8, 8}, SchedParams{});
  EXPECT_EQ(f.chain_pps, 0);
}

SchedNode random_node(SplitMix64& r, const std::string& name) {
  auto uni = [&](double lo, double hi) { return lo + (hi - lo) * double(r.next() >> 11) / double(1ull << 53); };
  return {name, NfModel{uni(0.05e-6, 5e-6), uni(2e-6, 60e-6), uni(0.5e-9, 20e-9), uni(2e-6, 20e-6)}, {}, 1.0};
}

std::vector<SchedNode> random_chain(SplitMix64& r, int n) {
  std::vector<SchedNode> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(random_node(r, "nf" + std::to_string(i)));
    if (i + 1 < n) v.back().children = {i + 1};
  }
  return v;
}

TEST(Allocator, MoreSmsNeverLowerTheChainRate) {
  SplitMix64 r(7);
  for (int trial = 0; trial < 40; ++trial) {
    auto nodes = random_chain(r, 1 + trial % 4);
    for (bool refine : {false, true})
      for (auto pol : {SchedulerPolicy::gnet, SchedulerPolicy::fair}) {
        SchedParams p;
        p.refine = refine;
        double last = 0;
        for (int total = 8; total <= 264; total += 8) {
          Allocation a = allocate(pol, nodes, 0, {total, 8, 8}, p);
          EXPECT_GE(a.chain_pps, last) << "trial " << trial << " " << scheduler_policy_name(pol)
                                       << " " << total << " SMs refine " << refine << "\n" << a.explain;
          last = a.chain_pps;
        }
        EXPECT_GT(last, 0) << "trial " << trial;
      }
  }
}

TEST(Allocator, GranularityAndBudgetRespected) {
  SplitMix64 r(11);
  for (int trial = 0; trial < 40; ++trial) {
    auto nodes = random_chain(r, 1 + trial % 5);
    for (auto pol : {SchedulerPolicy::gnet, SchedulerPolicy::fair}) {
      SchedParams p;
      Allocation a = allocate(pol, nodes, 0, {132, 8, 8}, p);  // an H100 with green contexts
      int sum = 0;
      for (const NodeAllocation& n : a.nodes) {
        if (a.chain_pps == 0) continue;
        EXPECT_GE(n.sms, 8);
        EXPECT_EQ(n.sms % 8, 0);
        EXPECT_EQ(n.batch % n.sms, 0u);  // B0 per SM
        EXPECT_LE(n.batch, p.max_batch);
        EXPECT_LE(n.latency_s, p.latency_bound_s * (1 + 1e-12));
        sum += n.sms;
      }
      EXPECT_LE(sum, 132);
      EXPECT_EQ(sum, a.sms_used);
      // Every NF sustains the chain rate it claims.
      for (size_t i = 0; i < nodes.size(); ++i)
        EXPECT_GE(a.nodes[i].throughput_pps, a.chain_pps * nodes[i].share * (1 - 1e-12));
    }
  }
  // 3 NFs, units of 8 on 132 SMs: 40 each (48 x 3 = 144 does not fit).
  auto three = random_chain(r, 3);
  Allocation f = allocate(SchedulerPolicy::fair, three, 0, {132, 8, 8}, SchedParams{});
  for (const NodeAllocation& n : f.nodes) EXPECT_EQ(n.sms, 40);
  // Units 4 then 2 (an A100): counts 4, 6, 8, ...
  Allocation g = allocate(SchedulerPolicy::gnet, three, 0, {108, 4, 2}, SchedParams{});
  for (const NodeAllocation& n : g.nodes) {
    EXPECT_GE(n.sms, 4);
    EXPECT_EQ(n.sms % 2, 0);
  }
}

// With fold_remainder the SMs below one partition step (132 - 128) join the NF that limits
// the chain; every other NF keeps its partition, and the chain rate never drops.
TEST(Allocator, GnetFoldsTheRemainderIntoTheLimitingNf) {
  // S_d's shape at 64 B: two light NFs and two heavy ones (an H200's fitted model).
  std::vector<SchedNode> sd = {{"fw", kernel_only(1.29e-8, 6.2e-6), {1}, 1.0},
                               {"ipsec", kernel_only(1.71e-7, 2.56e-5), {2}, 1.0},
                               {"nids", kernel_only(2.73e-7, 1.74e-5), {3}, 1.0},
                               {"router", kernel_only(1.99e-8, 5.3e-6), {}, 1.0}};
  SchedParams p;
  p.max_batch = 32768;
  Allocation plain = allocate(SchedulerPolicy::gnet, sd, 0, {132, 8, 8}, p);
  Allocation fold = allocate(SchedulerPolicy::gnet, sd, 0, {132, 8, 8, true}, p);
  ASSERT_GT(plain.chain_pps, 0);
  EXPECT_EQ(plain.folded_sms, 0);
  EXPECT_EQ(plain.sms_used, 128) << plain.explain;  // four SMs below a step
  EXPECT_EQ(fold.folded_sms, 132 - plain.sms_used);
  EXPECT_EQ(fold.sms_used, 132);
  size_t limit = 0;  // the NF that limits the plain plan
  for (size_t i = 1; i < sd.size(); ++i)
    if (plain.nodes[i].throughput_pps < plain.nodes[limit].throughput_pps) limit = i;
  EXPECT_EQ(sd[limit].name, "nids");
  for (size_t i = 0; i < sd.size(); ++i) {
    EXPECT_EQ(fold.nodes[i].sms, plain.nodes[i].sms + (i == limit ? fold.folded_sms : 0)) << sd[i].name;
    EXPECT_LE(fold.nodes[i].batch, p.max_batch);
    EXPECT_EQ(fold.nodes[i].batch % fold.nodes[i].sms, 0u);
    EXPECT_LE(fold.nodes[i].latency_s, p.latency_bound_s);
  }
  EXPECT_GT(fold.nodes[limit].throughput_pps, plain.nodes[limit].throughput_pps);
  EXPECT_GE(fold.chain_pps, plain.chain_pps);
  EXPECT_NE(fold.explain.find("below a partition step went to 'nids'"), std::string::npos) << fold.explain;
  // Nothing to fold where partitions come in any size.
  Allocation any = allocate(SchedulerPolicy::gnet, sd, 0, {132, 1, 1, true}, p);
  EXPECT_EQ(any.folded_sms, 0);
  // Random chains: the fold never lowers the rate and never passes the budget.
  SplitMix64 r(5);
  for (int trial = 0; trial < 40; ++trial) {
    auto nodes = random_chain(r, 1 + trial % 5);
    Allocation a = allocate(SchedulerPolicy::gnet, nodes, 0, {132, 8, 8}, SchedParams{});
    Allocation b = allocate(SchedulerPolicy::gnet, nodes, 0, {132, 8, 8, true}, SchedParams{});
    EXPECT_GE(b.chain_pps, a.chain_pps * (1 - 1e-12)) << b.explain;
    EXPECT_LE(b.sms_used, 132);
    int off_step = 0;
    for (const NodeAllocation& n : b.nodes) off_step += n.sms % 8 != 0;
    EXPECT_LE(off_step, 1);
  }
}

TEST(Allocator, BranchesSumChildrenIntoTheParent) {
  // r splits its traffic between x (3/4) and y (1/4); all three cost the same per packet.
  NfModel m{1e-6, 10e-6, 1e-9, 5e-6};
  std::vector<SchedNode> tree = {{"r", m, {1, 2}, 1.0}, {"x", m, {}, 0.75}, {"y", m, {}, 0.25}};
  Allocation a = allocate(SchedulerPolicy::gnet, tree, 0, {64, 1, 1}, SchedParams{});
  ASSERT_GT(a.chain_pps, 0);
  const auto &r = a.nodes[0], &x = a.nodes[1], &y = a.nodes[2];
  EXPECT_GE(r.throughput_pps, a.chain_pps * (0.75 + 0.25) * (1 - 1e-12));
  EXPECT_GE(x.throughput_pps, a.chain_pps * 0.75 * (1 - 1e-12));
  EXPECT_GE(y.throughput_pps, a.chain_pps * 0.25 * (1 - 1e-12));
  EXPECT_GT(r.sms, x.sms);  // the parent carries both branches
  EXPECT_GT(x.sms, y.sms);
  // The same three NFs in a line (every packet through all three) reach less on the same SMs.
  std::vector<SchedNode> line = {{"r", m, {1}, 1.0}, {"x", m, {2}, 1.0}, {"y", m, {}, 1.0}};
  Allocation l = allocate(SchedulerPolicy::gnet, line, 0, {64, 1, 1}, SchedParams{});
  EXPECT_GT(a.chain_pps, l.chain_pps);
}

// transfer_once (our executor: a chain's batch crosses PCIe once each way, beside the kernels).
// Two NFs with fast kernels (k1 = 10 ns, b1 = 1 us) and a transfer model of 50 ns/packet + 10 us
// (in plus out), batches of 1000: the transfers cap the chain at 1000 / ((50 + 10) us / 2) =
// 33.3 Mpps, which one SM per NF already exceeds (1000 / 11 us = 90.9 Mpps), so gnet stops there.
TEST(Allocator, TransferOnceCapsTheChainAtItsTransfers) {
  NfModel m{10e-9, 1e-6, 50e-9, 10e-6};
  std::vector<SchedNode> nodes{{"a", m, {1}, 1.0}, {"b", m, {}, 1.0}};
  SchedParams p = exact(0.1);
  p.max_batch = 1000;
  p.transfer_once = true;
  Allocation a = allocate(SchedulerPolicy::gnet, nodes, 0, {8, 1, 1}, p);
  EXPECT_NEAR(a.transfer_cap_pps, 1000 / 30e-6, 1);
  EXPECT_NEAR(a.chain_pps, 1000 / 30e-6, 1);
  EXPECT_EQ(a.sms_used, 2);  // no SMs handed out beyond what the transfers can feed
  EXPECT_NEAR(a.nodes[0].latency_s, 10e-9 * 1000 + 1e-6, 1e-12);  // no L_m in an NF's time
  // G-NET's own rule charges every NF its transfer: 1000 / (11 + 60) us = 14.1 Mpps on 1 SM.
  p.transfer_once = false;
  Allocation g = allocate(SchedulerPolicy::gnet, nodes, 0, {8, 1, 1}, p);
  EXPECT_EQ(g.transfer_cap_pps, 0);
  EXPECT_LT(g.chain_pps, a.chain_pps);
}

TEST(Allocator, TransferOnceNeverBelowGnetsRuleAndNeverAboveItsCap) {
  SplitMix64 r(23);
  for (int trial = 0; trial < 40; ++trial) {
    auto nodes = random_chain(r, 1 + trial % 4);
    for (auto pol : {SchedulerPolicy::gnet, SchedulerPolicy::fair, SchedulerPolicy::temporal}) {
      SchedParams p;
      Allocation g = allocate(pol, nodes, 0, {132, 8, 8}, p);
      p.transfer_once = true;
      Allocation t = allocate(pol, nodes, 0, {132, 8, 8}, p);
      EXPECT_LE(t.chain_pps, t.transfer_cap_pps * (1 + 1e-12)) << t.explain;
      if (t.chain_pps < t.transfer_cap_pps * (1 - 1e-9)) {
        EXPECT_GE(t.chain_pps, g.chain_pps * (1 - 1e-9))
            << "trial " << trial << " " << scheduler_policy_name(pol) << "\n" << g.explain << "\n" << t.explain;
      }
    }
  }
}

TEST(Allocator, RejectsMalformedGraphs) {
  NfModel m = kernel_only(1e-6, 1e-5);
  GpuBudget b{16, 1, 1};
  SchedParams p;
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {}, 0, b, p), std::invalid_argument);
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {{"a", m, {5}}}, 0, b, p), std::invalid_argument);
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {{"a", m, {1}}, {"b", m, {0}}}, 0, b, p),
               std::invalid_argument);  // cycle
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {{"a", m, {}}, {"b", m, {}}}, 0, b, p),
               std::invalid_argument);  // b unreachable
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {{"a", m, {1, 2}}, {"b", m, {}}, {"c", m, {}}}, 0, b, p),
               std::invalid_argument);  // children shares 1 + 1 above the parent's 1
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {{"a", m, {}}}, 1, b, p), std::invalid_argument);
  EXPECT_THROW(allocate(SchedulerPolicy::gnet, {{"a", m, {}}}, 0, {0, 1, 1}, p), std::invalid_argument);
}

// The batch for the offered rate on two_nfs() with a on 1 SM and b on 2 SMs (round 1 above),
// P = 0.5, C = 0, no transfer: at 100 kpps the target is 150 kpps; a needs
// B0 = ceil(0.15e6 * 10e-6 / (1 - 0.15e6 * 1e-6)) = ceil(1.5 / 0.85) = 2, b on 2 SMs
// ceil(1.5 / (2 - 0.3)) = 1, batch 2 (b's 1 x 2 SMs = 2 as well). Latency: fill 1 / 100k = 10 us,
// a's kernel 1 us x 2 + 10 us, b's 2 us x 1 + 10 us: 34 us.
TEST(Allocator, BatchForRateByHand) {
  Allocation a;
  a.nodes = {NodeAllocation{1, 29}, NodeAllocation{2, 30}};
  const RateBatch r = batch_for_rate(two_nfs(), a, 4, 100e3, 1e-3, exact(0.5));
  EXPECT_EQ(r.batch, 2u);
  EXPECT_NEAR(r.fill_s, 10e-6, 1e-12);
  EXPECT_NEAR(r.latency_s, 34e-6, 1e-12);
  EXPECT_TRUE(r.feasible) << r.why;
  // 30 us is less than that prediction: the bound cannot be met at this rate.
  const RateBatch tight = batch_for_rate(two_nfs(), a, 4, 100e3, 30e-6, exact(0.5));
  EXPECT_FALSE(tight.feasible);
  EXPECT_NE(tight.why.find("over the bound"), std::string::npos) << tight.why;
}

// Per node, or per chain for the whole-chain pipelines: a chain's partition is its NFs' sum, and
// the whole GPU where any of them has it (a plan trial's unco arm, a plan too small to split).
TEST(Allocator, PartitionRequestPerNodeOrPerChain) {
  const std::vector<std::vector<int>> plan{{8, 16, 48}, {24}, {8, 0}, {}};
  EXPECT_EQ(partition_request(plan, false), (std::vector<int>{8, 16, 48, 24, 8, 0}));
  EXPECT_EQ(partition_request(plan, true), (std::vector<int>{72, 24, 0, 0}));
  // A rotation among a chain's NFs keeps its partition (no rebuild under chain lanes).
  EXPECT_EQ(partition_request({{16, 48, 8}, {24}}, true), (std::vector<int>{72, 24}));
}

// Full batches say the source offers more only when they were the largest the chain may have:
// a batch sized for the offered rate closes full by design (a light chain at 10 Mpps with a
// batch of 288 fills every one), and taking the rounds' batch for it would hold each packet
// for thousands of others.
TEST(Allocator, FullRateSizedBatchesAreNotSaturation) {
  EXPECT_TRUE(chain_saturated(0.9, true));
  EXPECT_FALSE(chain_saturated(0.9, false));
  EXPECT_FALSE(chain_saturated(0.4, true));
  EXPECT_FALSE(chain_saturated(0.5, true));  // most: more than half
}

// Low load, small batches; high load, large ones; a rate the SMs cannot sustain is reported.
TEST(Allocator, BatchForRateGrowsWithTheRate) {
  Allocation a;
  a.nodes = {NodeAllocation{1, 29}, NodeAllocation{2, 30}};
  uint32_t last = 0;
  for (double pps : {10e3, 100e3, 300e3, 500e3, 600e3}) {
    const RateBatch r = batch_for_rate(two_nfs(), a, 4, pps, 1e-3, exact(0.5));
    EXPECT_TRUE(r.feasible) << pps << ": " << r.why;
    EXPECT_GE(r.batch, last) << pps;
    last = r.batch;
  }
  EXPECT_GT(last, 2u);
  // a on 1 SM tops out below 1 Mpps (1 us per packet): 1 Mpps x 1.5 cannot be sustained.
  const RateBatch over = batch_for_rate(two_nfs(), a, 4, 1e6, 1e-3, exact(0.5));
  EXPECT_FALSE(over.feasible);
  EXPECT_NE(over.why.find("cannot sustain"), std::string::npos) << over.why;
  // Whole-GPU nodes (sms 0) use every SM of the budget.
  Allocation whole;
  whole.nodes = {NodeAllocation{0, 0}, NodeAllocation{0, 0}};
  EXPECT_TRUE(batch_for_rate(two_nfs(), whole, 4, 1e6, 1e-3, exact(0.5)).feasible);
}

}  // namespace
}  // namespace gpunfv
