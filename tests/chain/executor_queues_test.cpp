// The executor with several rx queues per port (one ingress thread each) and one egress thread
// per chain: every packet accounted, packet numbers unique per port, each flow's packets in
// order at the sink, backpressure still holding the chain.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "chain/executor.h"
#include "config/config.h"
#include "gpu/device.h"
#include "io/generator_port.h"
#include "tests/chain/chain_test_util.h"
#include "tests/io/port_test_util.h"

namespace gpunfv {
namespace {

using Frames = std::vector<std::vector<uint8_t>>;
using FlowFrames = std::map<std::vector<uint8_t>, Frames>;  // flow (addresses, ports) -> frames

std::vector<uint8_t> flow_key(const std::vector<uint8_t>& f) { return {f.begin() + 26, f.begin() + 38}; }

void add_by_flow(const Frames& frames, FlowFrames& out) {
  for (const auto& f : frames) out[flow_key(f)].push_back(f);
}

Frames read_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  Frames out;
  if (!p) return out;
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1) out.emplace_back(data, data + h->caplen);
  pcap_close(p);
  return out;
}

// What a generator with `keys` produces on one queue, frame by frame.
Frames generated(const std::string& keys) {
  GeneratorPort gen(test::yaml_node("name: g\ntype: generator\n" + keys), 0, {});
  return test::drain(gen).bytes;
}

// Passes every packet; records the ingress numbers it saw, and sleeps per batch if told to.
class SeqProbe final : public NetworkFunction {
 public:
  SeqProbe(std::string name, int delay_us) : NetworkFunction(std::move(name)), delay_us_(delay_us) {}
  std::string_view type() const override { return "probe"; }
  void prepare(Backend) override {}
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t pos) const override {
    if (delay_us_) std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    for (uint32_t i = begin; i < end; ++i)
      if (b.next_nf[i] == pos) b.next_nf[i] = uint8_t(pos + 1);
  }
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView&, uint8_t, const GpuStream&) const override {}
#endif
  void collect(const BatchView& b, uint8_t pos, const CollectContext&) override {
    for (uint32_t i = 0; i < b.count; ++i)
      if (reached_node(b, i, pos)) seqs.push_back(b.seq[i]);
  }
  std::string describe() const override { return "probe " + name(); }
  std::vector<uint64_t> seqs;  // in egress order

 private:
  int delay_us_;
};

RuntimeConfig load(const std::string& name, const std::string& yaml, int probe_delay_us = 0) {
  auto dir = testing::temp_dir(name);
  testing::write_file(dir / "empty.rules", "");
  RuntimeConfig rc = load_runtime_config(testing::write_file(dir / "c.yaml", yaml));
  for (auto& nf : rc.nfs) nf = std::make_unique<SeqProbe>(nf->name(), probe_delay_us);
  return rc;
}

const char* kProbeNf = "nfs:\n  - {name: p, type: firewall, rules: empty.rules, default: accept}\n";

TEST(ExecutorQueues, FourQueuesKeepEveryPacketAndEachFlowsOrder) {
  const std::string gen = "count: 30011\nflows: 200\nsize: 64-300\nseed: 4\n";
  auto dir = testing::temp_dir("queues4");
  RuntimeConfig rc = load("queues4", R"(
ports:
  - {name: gen, type: generator, count: 30011, flows: 200, size: 64-300, seed: 4, queues: 4}
  - {name: out, type: pcap, tx: out.pcap}
)" + std::string(kProbeNf) + R"(
chains:
  - {from: gen, path: [p], to: out}
settings: {batch_size: 64, batches: 16, workers: 3, batch_deadline_us: 5}
)");
  ASSERT_EQ(rc.ports[0]->rx_queues(), 4);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  auto& probe = static_cast<SeqProbe&>(*rc.nfs[0]);
  rc.ports.clear();  // closes the capture
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_rx(), 30011u);
  EXPECT_EQ(s.total_tx(), 30011u);
  EXPECT_EQ(s.nfs[0].in, 30011u);
  // Packet numbers: each of 0 .. N-1 once, and in egress order (batches are numbered at submit).
  ASSERT_EQ(probe.seqs.size(), 30011u);
  for (size_t i = 0; i < probe.seqs.size(); ++i) ASSERT_EQ(probe.seqs[i], i);

  FlowFrames want, got;
  add_by_flow(generated(gen), want);
  add_by_flow(read_pcap((dir / "out.pcap").string()), got);
  EXPECT_EQ(got, want);  // the same frames, and each flow's in the order it was generated
}

TEST(ExecutorQueues, IngressThreadsCapPollsSeveralQueuesPerThread) {
  RuntimeConfig rc = load("queuescap", R"(
ports:
  - {name: gen, type: generator, count: 20000, flows: 64, size: 64, queues: 4}
  - {name: out, type: discard}
chains:
  - {from: gen, path: [], to: out}
settings: {batch_size: 128, batches: 8, workers: 2, ingress_threads: 3}
)");
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_tx(), 20000u);
}

// Two chains, two egress threads, one pcap sink: its tx is serialized by the executor's lock.
TEST(ExecutorQueues, TwoChainsShareAPcapSinkFromTheirOwnEgressThreads) {
  const std::string a = "count: 12000\nflows: 50\nsize: 64-200\nseed: 1\n";
  const std::string b = "count: 9000\nflows: 70\nsize: 64-200\nseed: 2\n";
  auto dir = testing::temp_dir("twoegress");
  RuntimeConfig rc = load("twoegress", R"(
ports:
  - {name: ga, type: generator, count: 12000, flows: 50, size: 64-200, seed: 1, queues: 2}
  - {name: gb, type: generator, count: 9000, flows: 70, size: 64-200, seed: 2, queues: 3}
  - {name: out, type: pcap, tx: out.pcap}
chains:
  - {from: ga, path: [], to: out}
  - {from: gb, path: [], to: out}
settings: {batch_size: 32, batches: 32, workers: 2, batch_deadline_us: 5}
)");
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  rc.ports.clear();
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.ports[2]->tx_packets, 21000u);
  FlowFrames want, got;
  add_by_flow(generated(a), want);
  add_by_flow(generated(b), want);
  add_by_flow(read_pcap((dir / "out.pcap").string()), got);
  EXPECT_EQ(got, want);
}

// ingress_adapt: at a light rate the queues end up on fewer rx threads (chain/ingress_share.h),
// moving between threads only at batch boundaries, so every flow's frames still leave in the
// order they were generated, and every frame is accounted for.
TEST(ExecutorQueues, AdaptedIngressKeepsFlowOrderAndAccounting) {
  const std::string gen = "count: 60000\nflows: 300\nsize: 64-300\nseed: 5\n";
  auto dir = testing::temp_dir("queuesadapt");
  RuntimeConfig rc = load("queuesadapt", R"(
ports:
  - {name: gen, type: generator, count: 60000, flows: 300, size: 64-300, seed: 5, queues: 4, live: true, rate: 100kpps}
  - {name: out, type: pcap, tx: out.pcap}
chains:
  - {from: gen, path: [], to: out}
settings: {batch_size: 64, batches: 32, workers: 2, batch_deadline_us: 200, ingress_adapt: true}
)");
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  rc.ports.clear();
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_rx(), 60000u);
  EXPECT_EQ(s.total_tx() + s.total_dropped(), 60000u);
  ASSERT_TRUE(s.scheduler.contains("ingress")) << s.scheduler.dump();
  const auto& in = s.scheduler["ingress"][0];
  EXPECT_EQ(in["threads"].get<int>(), 4);
  EXPECT_GE(in["active_at_end"].get<int>(), 1);
  EXPECT_GE(in["let_go"].get<uint64_t>(), 1u) << in.dump();  // 25 Kpps a queue: the threads idle
  if (s.total_dropped() != 0) return;  // a starved host lost frames: their order says nothing
  FlowFrames want, got;
  add_by_flow(generated(gen), want);
  add_by_flow(read_pcap((dir / "out.pcap").string()), got);
  EXPECT_EQ(got, want);
}

// A slow NF with backpressure: ingress threads of all queues pause, so nothing is lost.
TEST(ExecutorQueues, BackpressurePausesEveryQueue) {
  RuntimeConfig rc = load("queuesbp", R"(
ports:
  - {name: gen, type: generator, count: 20000, flows: 256, size: 64, queues: 3}
  - {name: out, type: discard}
)" + std::string(kProbeNf) + R"(
chains:
  - {from: gen, path: [p], to: out, backpressure: on, qt: 2.8}
settings: {batch_size: 256, batches: 64, cpu_workers_per_nf: 1, queue_batches: 8}
)", /*probe_delay_us=*/800);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_dropped(), 0u);
  EXPECT_EQ(s.total_tx(), 20000u);
  const auto& enter = s.chains[0]["stages"][0];
  EXPECT_GT(enter["slow_down_signals"].get<uint64_t>(), 0u);
  EXPECT_LE(s.chains[0]["stages"][1]["max_queued_packets"].get<uint64_t>(), 8u * 256u);
}

// A live source over several queues: what the chain did not take is counted per queue as
// ingress_backpressure, and rx = tx + drops still holds.
TEST(ExecutorQueues, LiveQueuesCountTheirOwnLosses) {
  RuntimeConfig rc = load("queueslive", R"(
ports:
  - {name: gen, type: generator, count: 200000, rate: 2Mpps, live: true, ring: 512, flows: 256, size: 64, queues: 2}
  - {name: out, type: discard}
)" + std::string(kProbeNf) + R"(
chains:
  - {from: gen, path: [p], to: out, backpressure: on}
settings: {batch_size: 256, batches: 16, cpu_workers_per_nf: 1, queue_batches: 4}
)", /*probe_delay_us=*/2000);
  RunStats s = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_EQ(s.total_rx(), 200000u);
  EXPECT_GT(s.ports[0]->dropped[DropReason::ingress_backpressure], 0u);
  EXPECT_EQ(s.total_tx() + s.total_dropped(), 200000u);
}

#if GPUNFV_HAVE_CUDA
// GPU backend fed by four queues: the same frames per flow, in the same order, as the CPU's.
TEST(ExecutorQueues, GpuBackendWithQueuesEqualsCpuPerFlow) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto run_on = [](Backend backend, const std::string& name) {
    auto dir = testing::temp_dir(name);
    RuntimeConfig rc = load_runtime_config(testing::write_file(dir / "c.yaml", R"(
ports:
  - {name: gen, type: generator, count: 50021, flows: 500, size: 64-600, seed: 8, dst_from: r1, queues: 4}
  - {name: p1, type: pcap, tx: p1.pcap}
  - {name: p2, type: pcap, tx: p2.pcap}
nfs:
  - name: r1
    type: router
    routes: {file: )" + testing::source_dir() + R"(/data/router/bart_ipv4_random5000.txt, spread: [p1, p2]}
chains:
  - {from: gen, path: [r1]}
settings: {batch_size: 512, batches: 32, batch_deadline_us: 10}
)"));
    RunStats s = run(rc, RunOptions{backend, 0, nullptr});
    rc.ports.clear();
    EXPECT_EQ(s.accounting_errors(), "");
    EXPECT_EQ(s.total_rx(), 50021u);
    FlowFrames out;
    add_by_flow(read_pcap((dir / "p1.pcap").string()), out);
    add_by_flow(read_pcap((dir / "p2.pcap").string()), out);
    return out;
  };
  FlowFrames cpu = run_on(Backend::cpu, "queues-gpu-cpu");
  FlowFrames gpu = run_on(Backend::gpu, "queues-gpu-gpu");
  EXPECT_FALSE(cpu.empty());
  EXPECT_EQ(gpu, cpu);
}
#endif

}  // namespace
}  // namespace gpunfv
