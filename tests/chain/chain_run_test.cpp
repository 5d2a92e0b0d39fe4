// Chains run end to end on the CPU backend: branches, routing-table (dynamic) chains, several
// chains in one configuration, per-NF accounting, and Simmer's backpressure under overload.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "chain/executor.h"
#include "config/config.h"
#include "nf/run_per_packet.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

#define PROBE_DROPS(X) X(probe_drop, "dropped by the tests' probe NF")
GPUNFV_NF_DROP_REASONS(ProbeDrop, "probe", PROBE_DROPS);

struct ProbeView {
  uint32_t drop_mod;   // drop packets whose flow hash / 256 is a multiple (0: drop none)
  uint32_t fault_mod;  // read past the frame of those whose flow hash / 65536 is (0: none)
};
struct ProbeLogic {
  GPUNFV_HD NfVerdict operator()(const ProbeView& v, PacketRef p) const {
    if (v.fault_mod && (p.flow_hash() >> 16) % v.fault_mod == 0 && p.frame()[p.length()] == 0x5A)
      return DropReason::none;
    if (v.drop_mod && (p.flow_hash() >> 8) % v.drop_mod == 0) return ProbeDrop::probe_drop;
    return DropReason::none;
  }
};

// Records which packets (ingress sequence numbers) reached it; optionally drops some, and
// optionally sleeps per batch to play a slow NF.
class ProbeNf final : public NetworkFunction {
 public:
  ProbeNf(std::string name, uint32_t drop_mod = 0, int delay_us = 0)
      : NetworkFunction(std::move(name)), drop_mod_(drop_mod), delay_us_(delay_us) {}
  std::string_view type() const override { return "probe"; }
  void prepare(Backend) override {}
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t pos) const override {
    if (delay_us_) std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    run_per_packet_cpu(b, begin, end, pos, ProbeView{drop_mod_, fault_mod}, ProbeLogic{},
                       first_drop_code<ProbeDrop>());
  }
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView&, uint8_t, const GpuStream&) const override {}
#endif
  void collect(const BatchView& b, uint8_t pos, const CollectContext&) override {
    for (uint32_t i = 0; i < b.count; ++i) {
      if (!reached_node(b, i, pos)) continue;
      const uint8_t* f = b.data.framework_data() + size_t(i) * b.stride + b.headers[i].l3_off;
      uint32_t dst = uint32_t(f[16]) << 24 | uint32_t(f[17]) << 16 | uint32_t(f[18]) << 8 | f[19];
      seen[b.seq[i]] = {dst, b.flow_hash[i], dropped_at_node(b, i, pos)};
    }
  }
  std::string describe() const override { return "probe " + name(); }

  struct Seen {
    uint32_t dst, hash;
    bool dropped;
  };
  std::map<uint64_t, Seen> seen;
  uint32_t fault_mod = 0;  // set before the run

 private:
  uint32_t drop_mod_;
  int delay_us_;
};

// Loads `yaml` (NFs declared as firewalls with an empty rule file, accept by default) and
// swaps each NF for a probe of the same name.
RuntimeConfig load_with_probes(const std::string& name, const std::string& yaml,
                               const std::map<std::string, std::pair<uint32_t, int>>& knobs = {}) {
  auto dir = testing::temp_dir(name);
  testing::write_file(dir / "empty.rules", "");
  std::string cfg = testing::write_file(dir / "c.yaml", yaml);
  RuntimeConfig rc = load_runtime_config(cfg);
  for (auto& nf : rc.nfs) {
    auto it = knobs.find(nf->name());
    auto [drop_mod, delay] = it == knobs.end() ? std::pair<uint32_t, int>{0, 0} : it->second;
    nf = std::make_unique<ProbeNf>(nf->name(), drop_mod, delay);
  }
  return rc;
}

std::string nfs_yaml(std::initializer_list<const char*> names) {
  std::string s = "nfs:\n";
  for (const char* n : names)
    s += std::string("  - {name: ") + n + ", type: firewall, rules: empty.rules, default: accept}\n";
  return s;
}

ProbeNf& probe(RuntimeConfig& rc, size_t i) { return static_cast<ProbeNf&>(*rc.nfs[i]); }

TEST(ChainRun, BranchesAndRoutingTableSendEachPacketWhereTheGraphSays) {
  RuntimeConfig rc = load_with_probes("branches", R"(
ports:
  - {name: gen, type: generator, count: 20000, flows: 512, size: 64, seed: 7}
  - {name: out, type: discard}
)" + nfs_yaml({"a", "b", "c", "d", "e"}) + R"(
chains:
  - from: gen
    to: out
    path: [a, {nf: b, next: [c, d]}, {nf: c, next: [e]}, d, e]
    routes:
      - {dst: 198.19.0.0/16, at: ingress, next: b}
      - {dst: 198.18.128.0/17, at: a, next: done}
settings: {batch_size: 256, batches: 16, workers: 3}
)", {{"d", {3, 0}}});
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_rx(), 20000u);

  // Every packet's path, recomputed from its destination and flow hash.
  std::map<uint64_t, std::vector<int>> took;
  std::map<uint64_t, ProbeNf::Seen> facts;
  for (int k = 0; k < 5; ++k)
    for (auto& [seq, seen] : probe(rc, k).seen) {
      took[seq].push_back(k);
      facts[seq] = seen;
    }
  ASSERT_EQ(took.size(), 20000u);  // every generated packet reached some NF
  uint64_t via_c = 0, via_d = 0, skipped_a = 0, left_early = 0, dropped_at_d = 0;
  for (auto& [seq, path] : took) {
    const auto [dst, hash, dropped_last] = facts[seq];
    std::vector<int> want;
    const bool from_b = (dst >> 16) == 0xC613;
    if (!from_b) want.push_back(0);
    if (!from_b && (dst >> 15) == (0xC6128000u >> 15)) {
      ++left_early;
    } else {
      want.push_back(1);
      const bool c = hash % 2 == 0;
      want.push_back(c ? 2 : 3);
      const bool d_drops = !c && (hash >> 8) % 3 == 0;
      if (!d_drops) want.push_back(4);
      via_c += c, via_d += !c, dropped_at_d += d_drops;
    }
    skipped_a += from_b;
    ASSERT_EQ(path, want) << "packet " << seq << " dst " << std::hex << dst << " hash " << hash;
  }
  EXPECT_GT(via_c, 1000u);
  EXPECT_GT(via_d, 1000u);
  EXPECT_GT(skipped_a, 1000u);
  EXPECT_GT(left_early, 1000u);
  EXPECT_GT(dropped_at_d, 100u);
  // Per-NF counters agree with what each NF saw.
  for (int k = 0; k < 5; ++k) EXPECT_EQ(s.nfs[k].in, probe(rc, k).seen.size()) << k;
  EXPECT_EQ(s.nfs[3].drops.total(), dropped_at_d);
  EXPECT_EQ(s.nfs[4].in, s.nfs[2].out + s.nfs[3].out);
  EXPECT_EQ(s.total_tx(), 20000u - dropped_at_d);
}

TEST(ChainRun, SeveralChainsShareNfs) {
  RuntimeConfig rc = load_with_probes("two-chains", R"(
ports:
  - {name: g1, type: generator, count: 5000, flows: 64, size: 128, seed: 1}
  - {name: g2, type: generator, count: 3000, flows: 64, size: 64, seed: 2}
  - {name: out, type: discard}
)" + nfs_yaml({"a", "b", "c"}) + R"(
chains:
  - {name: one, from: g1, to: out, path: [a, b]}
  - {name: two, from: g2, to: out, path: [b, c]}
settings: {batch_size: 100, workers: 2}
)");
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.nfs[0].in, 5000u);
  EXPECT_EQ(s.nfs[1].in, 8000u);
  EXPECT_EQ(s.nfs[2].in, 3000u);
  EXPECT_EQ(s.total_tx(), 8000u);
  ASSERT_EQ(s.chains.size(), 2u);
  EXPECT_EQ(s.chains[1]["stages"][1]["nf"], "b");
  EXPECT_EQ(s.chains[1]["stages"][1]["packets"], 3000u);
}

// An NF that reads outside its memory (isoPointer): the read is refused, the packet dropped as
// nf_isolation_fault, the NF quarantined (its later packets dropped without running it), and
// the chain beside it loses nothing.
TEST(ChainRun, NfReachingOutsideItsMemoryIsQuarantined) {
  RuntimeConfig rc = load_with_probes("isolation", R"(
ports:
  - {name: g1, type: generator, count: 20000, flows: 512, size: 64, seed: 5}
  - {name: g2, type: generator, count: 7000, flows: 64, size: 128, seed: 6}
  - {name: out, type: discard}
)" + nfs_yaml({"faulty", "clean"}) + R"(
chains:
  - {name: one, from: g1, to: out, path: [faulty]}
  - {name: two, from: g2, to: out, path: [clean]}
settings: {batch_size: 64, workers: 2}
)");
  probe(rc, 0).fault_mod = 7;
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_TRUE(rc.nfs[0]->quarantined());
  EXPECT_FALSE(rc.nfs[1]->quarantined());
  const uint64_t faults = s.nfs[0].drops.by_reason[int(DropReason::nf_isolation_fault)];
  EXPECT_GE(faults, 1u);
  EXPECT_EQ(s.nfs[0].drops.total(), faults);
  EXPECT_EQ(s.nfs[0].in, 20000u);
  // What passed the faulty NF passed before it was quarantined, and never a faulting packet.
  uint64_t passed = 0;
  for (auto& [seq, seen] : probe(rc, 0).seen)
    if (!seen.dropped) {
      ++passed;
      EXPECT_NE((seen.hash >> 16) % 7, 0u) << seq;
    }
  EXPECT_EQ(passed, s.nfs[0].out);
  EXPECT_LT(passed, 20000u * 6 / 7);  // quarantine stopped it
  // The other chain lost nothing.
  EXPECT_EQ(s.nfs[1].in, 7000u);
  EXPECT_EQ(s.nfs[1].drops.total(), 0u);
  EXPECT_EQ(s.total_tx(), passed + 7000u);
}

// A slow NF in the middle of a chain with bounded queues: without backpressure the fast NF
// before it overruns its queue (drops inside the chain); with it, nothing is lost inside the
// chain and every packet is accounted.
RunStats run_overloaded(bool backpressure, RuntimeConfig* keep = nullptr) {
  RuntimeConfig rc = load_with_probes(backpressure ? "bp-on" : "bp-off", R"(
ports:
  - {name: gen, type: generator, count: 40000, flows: 256, size: 64, seed: 3}
  - {name: out, type: discard}
)" + nfs_yaml({"fast", "slow", "last"}) + R"(
chains:
  - {from: gen, to: out, path: [fast, slow, last], backpressure: )" +
                                                 (backpressure ? "on" : "off") + R"(, qt: 2.8}
settings: {batch_size: 256, batches: 64, cpu_workers_per_nf: 1, queue_batches: 8}
)", {{"slow", {0, 1500}}});
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  return s;
}

TEST(ChainRun, BackpressureKeepsLossOutOfTheChain) {
  RunStats off = run_overloaded(false);
  EXPECT_EQ(off.accounting_errors(), "");
  uint64_t lost_off = 0;  // inside the chain: at the slow NF, and at the fast one before it
  for (const NfCounters& n : off.nfs) lost_off += n.drops.by_reason[int(DropReason::nf_queue_full)];
  EXPECT_GT(off.nfs[1].drops.by_reason[int(DropReason::nf_queue_full)], 0u)
      << "the slow NF's queue should overflow without backpressure";
  EXPECT_EQ(off.total_tx() + lost_off, 40000u);

  RunStats on = run_overloaded(true);
  EXPECT_EQ(on.accounting_errors(), "");
  EXPECT_EQ(on.total_dropped(), 0u);
  EXPECT_EQ(on.total_tx(), 40000u);
  // The fast NF was told to slow down, and spent time held off.
  const auto& fast = on.chains[0]["stages"][1];
  EXPECT_GT(fast["slow_down_signals"].get<uint64_t>(), 0u);
  EXPECT_GT(fast["slowed_s"].get<double>(), 0.0);
  EXPECT_LE(on.chains[0]["stages"][2]["max_queued_packets"].get<uint64_t>(), 8u * 256u);
}

}  // namespace
}  // namespace gpunfv
