// GPU backend equals CPU backend, bit for bit. Skipped where no CUDA device is present (CI);
// scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include "gpu/device.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <thread>
#include <cstring>
#include <mutex>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "chain/executor.h"
#include "chain/processing_stage.h"
#include "config/config.h"
#include "core/ipv4_prefix.h"
#include "nf/router/router.h"
#include "sched/perf_model.h"
#include "tests/chain/batch_pairs.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/scoped_env.h"

namespace gpunfv {
namespace {

using testing::BatchPairs;
using testing::expect_pairs_equal;
using testing::read_batch_pairs;
using testing::run_all_on_stage;
using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

bool have_device() { return cuda_device_available(); }

// Every frame of a capture, in order.
std::vector<std::vector<uint8_t>> pcap_frames(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  std::vector<std::vector<uint8_t>> out;
  if (!p) return out;
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1) out.emplace_back(data, data + h->caplen);
  pcap_close(p);
  return out;
}

// A made-up performance model of each (name, type) NF on this device at 64 and 1518 B, for
// gnet to plan with (what gpunfv profile would measure, without the minutes it takes).
std::string write_model(const std::filesystem::path& dir,
                        const std::vector<std::pair<std::string, std::string>>& nfs) {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  ModelStore store;
  for (const auto& [name, type] : nfs)
    for (uint32_t bytes : {64u, 1518u}) {
      ModelEntry e;
      e.device = prop.name;
      e.nf_name = name;
      e.nf_type = type;
      e.packet_bytes = bytes;
      e.profile_sms = 8;
      const double per_byte = bytes / 64.0;
      e.kernel_samples = {{64, 4e-6 * per_byte}, {1024, 40e-6 * per_byte}};
      e.transfer_samples = {{256, 3e-6 * per_byte}, {8192, 60e-6 * per_byte}};
      fit_entry(e);
      store.add(std::move(e));
    }
  const std::string path = (dir / "model.json").string();
  store.save(path);
  return path;
}

std::string config(const std::string& dir_name, const std::string& port,
                   const std::string& chain = "{from: in, path: [r1], to: p1}",
                   const std::string& settings = "") {
  auto dir = temp_dir(dir_name);
  write_file(dir / "fw.rules", "@10.0.0.0/12 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n");
  return write_file(dir / "c.yaml", "ports:\n  - " + port + R"(
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
  - name: r1
    type: router
    routes: {file: )" + source_dir() + R"(/data/router/bart_ipv4_random5000.txt, spread: [p1, p2]}
  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}
  - name: ids
    type: nids
    rules: [)" + source_dir() + R"(/data/nids/et_open_2024-04-21/emerging-voip.rules.gz]
    action: alert
chains:
  - )" + chain + R"(
settings: {batch_size: 4096, batches: 8)" + settings + R"(}
)");
}

// `rc`'s NFs prepared for both backends, its first port read into batch pairs of its batch
// shape, and the CPU halves run through its first chain.
struct CpuRunPairs {
  BatchShape shape;
  BatchPairs pairs;
};
CpuRunPairs pairs_run_on_cpu(RuntimeConfig& rc) {
  for (auto& nf : rc.nfs) {
    nf->prepare(Backend::cpu);
    nf->prepare(Backend::gpu);
  }
  CpuRunPairs r{plan_batch_shape(rc), {}};
  r.pairs = read_batch_pairs(*rc.ports[0], r.shape);
  for (auto& c : r.pairs.cpu) run_chain_cpu(rc, rc.chains[0], c->view());
  return r;
}

// Runs the same input through run_chain_cpu and the GPU stage and compares every byte and
// every metadata field egress reads. `report`: the GPU stage's report (where given). `beside`
// (where given) runs on a thread of its own while the batches flow, until `stop` is set.
using Beside = std::function<void(RuntimeConfig&, const std::atomic<bool>& stop)>;
void compare_backends(const std::string& cfg_path, nlohmann::json* report = nullptr,
                      const Beside& beside = {}) {
  RuntimeConfig rc = load_runtime_config(cfg_path);
  for (auto& nf : rc.nfs) {
    nf->prepare(Backend::cpu);
    nf->prepare(Backend::gpu);
  }
  Port& port = *rc.ports[0];
  const BatchShape shape = plan_batch_shape(rc);
  const uint32_t cap = shape.capacity, stride = shape.stride;
  auto stage = make_gpu_stage(rc, shape);
  std::mutex m;
  std::condition_variable cv;
  int finished = 0;
  stage->start([&](Batch*) {
    std::lock_guard<std::mutex> lk(m);
    ++finished;
    cv.notify_one();
  });
  std::atomic<bool> stop_beside{false};
  std::thread beside_thread;
  if (beside) beside_thread = std::thread([&] { beside(rc, stop_beside); });
  uint64_t compared = 0, batch_seq = 0;
  while (!port.rx_done()) {
    Batch cpu(cap, stride, MemoryKind::host, shape.result_stride);
    Batch gpu(cap, stride, MemoryKind::host_pinned, shape.result_stride);
    while (cpu.count() < cap && !port.rx_done()) port.rx_burst(cpu, cap - cpu.count());
    if (cpu.count() == 0) break;
    std::memcpy(gpu.base(), cpu.base(), cpu.layout().bytes);
    gpu.set_count(cpu.count());
    gpu.batch_seq = batch_seq++;  // the pipeline's queues release batches in this order
    run_chain_cpu(rc, rc.chains[0], cpu.view());
    finished = 0;
    stage->submit(&gpu);
    {
      std::unique_lock<std::mutex> lk(m);
      cv.wait(lk, [&] { return finished == 1; });
    }
    BatchView a = cpu.view(), b = gpu.view();
    // Packets sent to each node: by the switch kernels, or by the NFs' kernels that switch
    // as they finish (nf/node_exit.h).
    for (uint32_t k = 0; k < kMaxChainNodes; ++k) ASSERT_EQ(a.node_packets[k], b.node_packets[k]) << "node " << k;
    for (uint32_t i = 0; i < a.count; ++i, ++compared) {
      ASSERT_EQ(a.len[i], b.len[i]) << i;
      ASSERT_EQ(a.verdict[i], b.verdict[i]) << i;
      ASSERT_EQ(a.next_nf[i], b.next_nf[i]) << i;
      ASSERT_EQ(a.visited[i], b.visited[i]) << i;
      ASSERT_EQ(a.out_port[i], b.out_port[i]) << i;
      ASSERT_EQ(a.flow_hash[i], b.flow_hash[i]) << i;
      ASSERT_EQ(0, std::memcmp(a.results.framework_data() + size_t(i) * shape.result_stride,
                               b.results.framework_data() + size_t(i) * shape.result_stride,
                               shape.result_stride))
          << i;
      ASSERT_EQ(0, std::memcmp(&a.headers[i], &b.headers[i], sizeof(PacketHeaders))) << i;
      ASSERT_EQ(0, std::memcmp(a.data.framework_data() + size_t(i) * stride,
                               b.data.framework_data() + size_t(i) * stride,
                               std::min<uint32_t>(a.len[i], stride)))
          << i;
    }
  }
  stop_beside = true;
  if (beside_thread.joinable()) beside_thread.join();
  stage->stop();
  EXPECT_GT(compared, 0u);
  if (report) stage->report(*report);
}

TEST(GpuStage, RealTraceEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_backends(config("gpu-trace", "{name: in, type: pcap, rx: " + source_dir() +
                                           "/data/traces/SIP_CALL_RTP_G711.pcap, repeat: 4}"));
}

TEST(GpuStage, GeneratedImixEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_backends(config("gpu-gen",
                          "{name: in, type: generator, size: imix, flows: 1000, count: 200000, "
                          "dst_from: r1}"));
}

// A chain with a branch, a routing table and three NFs, under each sharing policy: every NF
// on its own stream and SM partition, packets moving between them by index.
TEST(GpuStage, BranchyChainEqualsCpuUnderEveryPolicy) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string chain =
      "{from: in, path: [fw, {nf: r1, next: [ids, done]}, ids], "
      "routes: [{dst: 198.18.0.0/16, at: ingress, next: r1}, {dst: 0.0.0.0/1, at: r1, next: ids}]}";
  const std::string model =
      write_model(temp_dir("gpu-branchy-model"), {{"r1", "router"}, {"fw", "firewall"}, {"ids", "nids"}});
  for (const char* policy : {"fair", "temporal", "unco", "gnet"}) {
    SCOPED_TRACE(policy);
    const std::string extra = std::string(", scheduler: ") + policy +
                              (std::string(policy) == "gnet" ? ", model: " + model : "");
    compare_backends(config(std::string("gpu-branchy-") + policy,
                            "{name: in, type: generator, size: imix, flows: 2000, count: 100000, "
                            "dst_from: r1}",
                            chain, extra));
  }
}

// A re-plan while batches are in flight (G-NET 5.3: re-run without dropping or reordering
// packets): every few milliseconds the NFs get different SM partitions while all batches are
// queued at once; each NF stage must finish its batches on the old partition before it
// moves. IPsec's sequence numbers (one counter per SA, handed out in batch order) and the
// byte-exact comparison with the CPU catch any batch that overtook another.
// `packets`: enough that the run outlasts the scheduler thread's start and a few re-plans.
// `pipeline`: settings.gpu_pipeline; a fused one never re-plans (unco), but its batches run on
// several streams at once and must still keep IPsec's numbering in batch order.
// `graphs`: settings.gpu_graphs. Returns the stage's report.
nlohmann::json replan_under_load_keeps_order(const std::string& scheduler, uint64_t packets,
                                             const std::string& pipeline = "staged",
                                             uint32_t zero_copy = 0, bool graphs = false,
                                             uint32_t issue_threads = 1) {
  auto dir = temp_dir("gpu-replan-" + scheduler + "-" + pipeline + std::to_string(zero_copy) +
                      (graphs ? "-graphs" : "") + "-i" + std::to_string(issue_threads));
  const std::string model = scheduler == "gnet"
      ? ", model: " + write_model(dir, {{"fw", "firewall"}, {"enc", "ipsec"}, {"ids", "nids"}})
      : "";
  write_file(dir / "fw.rules", "@10.0.0.0/12 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n");
  const std::string cfg = write_file(dir / "c.yaml", R"(ports:
  - {name: in, type: generator, size: imix, flows: 3000, count: )" + std::to_string(packets) + R"(}
  - {name: p1, type: discard}
nfs:
  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}
  - name: enc
    type: ipsec
    direction: outbound
    bypass: true
    sas:
      - {spi: 0x1001, enc_key: 4a0e7ef1c6b2d9a0135f7e8c2b91d4a6c0ffee01, auth_key: 7f3c9a2e5b8d1f4a6c0e2b9d8f7a1c3e5b2d4f60, local: 198.51.100.1, remote: 203.0.113.1, match: 198.18.0.0/16}
      - {spi: 0x1002, enc_key: 91b3d5f7092b4d6f8193a5c7e9fb1d3fc0ffee02, auth_key: 0d1c2b3a49586776859a4b3c2d1e0f1a2b3c4d5e, local: 198.51.100.1, remote: 203.0.113.1, match: 198.19.0.0/16}
  - name: ids
    type: nids
    rules: [)" + source_dir() + R"(/data/nids/et_open_2024-04-21/emerging-voip.rules.gz]
    action: alert
chains:
  - {from: in, path: [fw, enc, ids], to: p1}
settings: {batch_size: 2048, batches: 8, gpu_in_flight: 8, gpu_pipeline: )" + pipeline +
                                                    (zero_copy ? ", gpu_zero_copy_packets: " + std::to_string(zero_copy) : "") +
                                                    (graphs ? ", gpu_graphs: true" : "") +
                                                    (issue_threads > 1 ? ", gpu_issue_threads: " + std::to_string(issue_threads) : "") +
                                                    ", scheduler: " + scheduler + model + R"(}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  auto [shape, pairs] = pairs_run_on_cpu(rc);

  setenv("GPUNFV_DEBUG_REPLAN_MS", "2", 1);
  auto stage = make_gpu_stage(rc, shape);
  unsetenv("GPUNFV_DEBUG_REPLAN_MS");
  run_all_on_stage(*stage, pairs.gpu);
  nlohmann::json sched;
  stage->report(sched);
  if (pipeline == "staged" || scheduler == "gnet") {
    EXPECT_GE(sched["plans"].size(), 3u) << sched.dump();
    EXPECT_GT(sched["lane_moves"].get<uint64_t>(), 0u) << sched.dump();
  }
  const uint64_t compared = expect_pairs_equal(pairs);
  EXPECT_GT(compared, 0u);
  return sched;
}

TEST(GpuStage, ReplanUnderLoadKeepsOrder) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  replan_under_load_keeps_order("fair", 400000);
}

TEST(GpuStage, GnetReplanUnderLoadKeepsOrder) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // gnet's plans are fast to apply: a longer run, so re-plans land while batches are queued.
  replan_under_load_keeps_order("gnet", 1000000);
}

// gnet on the fused pipeline: one partition per chain, which each re-plan resizes; the issuing
// thread moves its streams there once its batches are back, and IPsec's numbering stays in
// batch order across the move.
TEST(GpuStage, GnetFusedReplanUnderLoadKeepsOrder) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = replan_under_load_keeps_order("gnet", 1000000, "fused");
  EXPECT_NE(r["line"].get<std::string>().find("chain "), std::string::npos) << r.dump();
}

// The whole executor under gnet (ingress, the planned batches, egress) against the CPU
// backend: the same frames leave each port, in the same order, and the same drops.
TEST(GpuStage, FusedPipelineKeepsOrderAcrossStreams) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  replan_under_load_keeps_order("unco", 400000, "fused");
}

// The fused pipeline runs each batch's whole chain at once, branches included.
TEST(GpuStage, FusedPipelineBranchyChainEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string chain =
      "{from: in, path: [fw, {nf: r1, next: [ids, done]}, ids], "
      "routes: [{dst: 198.18.0.0/16, at: ingress, next: r1}, {dst: 0.0.0.0/1, at: r1, next: ids}]}";
  compare_backends(config("gpu-branchy-fused",
                          "{name: in, type: generator, size: imix, flows: 2000, count: 100000, "
                          "dst_from: r1}",
                          chain, ", scheduler: unco, gpu_pipeline: fused"));
}

// The same with the switch after every NF as a kernel of its own (GPUNFV_DEBUG_SWITCH_KERNELS),
// as inbound IPsec, a quarantined NF and an NF process always have it.
TEST(GpuStage, FusedSwitchKernelsBranchyChainEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  testing::ScopedEnv kernels("GPUNFV_DEBUG_SWITCH_KERNELS", "1");
  const std::string chain =
      "{from: in, path: [fw, {nf: r1, next: [ids, done]}, ids], "
      "routes: [{dst: 198.18.0.0/16, at: ingress, next: r1}, {dst: 0.0.0.0/1, at: r1, next: ids}]}";
  compare_backends(config("gpu-branchy-switch-kernels",
                          "{name: in, type: generator, size: imix, flows: 2000, count: 100000, "
                          "dst_from: r1}",
                          chain, ", scheduler: unco, gpu_pipeline: fused"));
}

// CUDA graphs (settings.gpu_graphs) on the branchy chain: every batch one graph launch, on
// fresh host batches each time (new addresses: the slots' graphs are updated in place). The
// last batch is short enough for zero copy, a different graph shape than its slot's copying
// one: that slot's graph is made anew (4 slots: at least 5 instantiations).
TEST(GpuStage, FusedGraphsBranchyChainEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string chain =
      "{from: in, path: [fw, {nf: r1, next: [ids, done]}, ids], "
      "routes: [{dst: 198.18.0.0/16, at: ingress, next: r1}, {dst: 0.0.0.0/1, at: r1, next: ids}]}";
  nlohmann::json r;
  compare_backends(
      config("gpu-branchy-fused-graphs",
             "{name: in, type: generator, size: imix, flows: 2000, count: 100000, dst_from: r1}", chain,
             ", scheduler: unco, gpu_pipeline: fused, gpu_in_flight: 4, gpu_graphs: true, "
             "gpu_zero_copy_packets: 2048"),
      &r);
  const nlohmann::json& g = r["gpu_graphs"];
  const uint64_t batches = (100000 + 4095) / 4096;  // 24 full, the last 1,696 packets
  EXPECT_EQ(g["launches"].get<uint64_t>(), batches) << r.dump();
  EXPECT_EQ(g["capture_failures"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(g["direct_batches"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(g["updates"].get<uint64_t>() + g["instantiations"].get<uint64_t>(), batches) << r.dump();
  EXPECT_GE(g["instantiations"].get<uint64_t>(), 5u) << r.dump();
  EXPECT_EQ(r["pcie"]["zero_copy_batches"].get<uint64_t>(), 1u) << r.dump();
  EXPECT_EQ(r["pcie"]["host_batches"].get<uint64_t>(), batches - 1) << r.dump();
}

// Adds and deletes a prefix of the first NF (a router) over and over until stopped, counting
// the updates. The prefix (240.0.0.0/8: no route of the table covers it, so none of the
// generator's destinations) changes no packet's route: the output stays the CPU's.
Beside route_toggler(uint64_t& updates) {
  return [&updates](RuntimeConfig& rc, const std::atomic<bool>& stop) {
    auto& router = dynamic_cast<Router&>(*rc.nfs[0]);
    const Ipv4Prefix unused = *parse_ipv4_prefix("240.0.0.0/8");
    while (!stop) {
      const bool add = updates % 2 == 0;
      router.update({{unused, add ? std::optional<uint16_t>(1) : std::nullopt, add ? "p1" : ""}}, "toggle");
      ++updates;
    }
  };
}

// Route updates while batches are recorded into graphs: an update synchronizes the streams
// that launched over the copy it rewrites, which it may do only once every recording under way
// is launched (gpu/graph_launch_gate.h); synchronizing a stream while it captures would fail
// the update.
TEST(GpuStage, FusedGraphsBesideRouteUpdatesEqualCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  uint64_t updates = 0;
  const Beside toggle = route_toggler(updates);
  nlohmann::json r;
  compare_backends(config("gpu-fused-graphs-updates",
                          "{name: in, type: generator, size: imix, flows: 2000, count: 200000, "
                          "dst_from: r1}",
                          "{from: in, path: [r1]}", ", scheduler: unco, gpu_pipeline: fused, gpu_graphs: true"),
                   &r, toggle);
  EXPECT_GT(updates, 0u);
  EXPECT_GT(r["gpu_graphs"]["launches"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(r["gpu_graphs"]["capture_failures"].get<uint64_t>(), 0u) << r.dump();
}

// IPsec orders its batches by an event between their ordered passes (nf/ipsec/ipsec.cu),
// which a batch's CUDA graph keeps as event nodes: with graphs on, its chain's batches are
// recorded too, and keep IPsec's numbering across the streams they run on.
TEST(GpuStage, FusedGraphsKeepIpsecOrderAcrossStreams) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = replan_under_load_keeps_order("unco", 400000, "fused", 0, true);
  EXPECT_GT(r["gpu_graphs"]["launches"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(r["gpu_graphs"]["capture_failures"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(r["gpu_graphs"]["direct_batches"].get<uint64_t>(), 0u) << r.dump();
}

// Three threads issuing the chain's batches (settings.gpu_issue_threads), each on its own
// streams: every NF still sees the batches in ingress order, so IPsec numbers them as the CPU.
TEST(GpuStage, FusedIssueThreadsKeepIpsecOrder) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = replan_under_load_keeps_order("unco", 400000, "fused", 0, false, 3);
  EXPECT_EQ(r["issue_threads"].get<uint32_t>(), 3u) << r.dump();
}

// The executor end to end (ingress, the GPU stage, egress) against the CPU backend: counts,
// drops and every frame written. `settings` completes the settings map; `model` is written into
// it for gnet. Returns the GPU run's scheduler report.
nlohmann::json expect_run_equals_cpu(const std::string& name, const std::string& settings,
                                     const std::string& path = "[fw, ids, r1]") {
  auto dir = temp_dir(name);
  const std::string model = write_model(dir, {{"fw", "firewall"}, {"ids", "nids"}, {"r1", "router"}});
  write_file(dir / "fw.rules", "@10.0.0.0/12 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n");
  auto cfg = [&](const std::string& backend) {
    return write_file(dir / (backend + ".yaml"), R"(ports:
  - {name: in, type: generator, size: imix, flows: 2000, count: 300000, dst_from: r1, seed: 4}
  - {name: p1, type: pcap, tx: )" + backend + R"(-p1.pcap}
  - {name: p2, type: pcap, tx: )" + backend + R"(-p2.pcap}
nfs:
  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}
  - name: ids
    type: nids
    rules: [)" + source_dir() + R"(/data/nids/et_open_2024-04-21/emerging-voip.rules.gz]
    action: alert
  - name: r1
    type: router
    routes: {file: )" + source_dir() + R"(/data/router/bart_ipv4_random5000.txt, spread: [p1, p2]}
chains:
  - {from: in, path: )" + path + R"(}
settings: {batch_size: 4096, batches: 16, )" + settings + (settings.find("gnet") != std::string::npos ? ", model: " + model : "") + R"(}
)");
  };
  RuntimeConfig a = load_runtime_config(cfg("cpu")), b = load_runtime_config(cfg("gpu"));
  RunStats cpu = run(a, RunOptions{Backend::cpu, 0, nullptr});
  RunStats gpu = run(b, RunOptions{Backend::gpu, 0, nullptr});
  a.ports.clear(), b.ports.clear();  // closes the captures
  EXPECT_EQ(gpu.accounting_errors(), "");
  for (size_t p = 0; p < cpu.ports.size(); ++p) {
    EXPECT_EQ(cpu.ports[p]->tx_packets, gpu.ports[p]->tx_packets);
    EXPECT_EQ(cpu.ports[p]->dropped.by_reason, gpu.ports[p]->dropped.by_reason);
  }
  for (size_t n = 0; n < cpu.nfs.size(); ++n) EXPECT_EQ(cpu.nfs[n].drops.by_reason, gpu.nfs[n].drops.by_reason);
  for (const char* port : {"p1", "p2"}) {
    // Frames only: the generator stamps them with the wall clock, which differs between runs.
    const auto c = pcap_frames((dir / (std::string("cpu-") + port + ".pcap")).string());
    const auto g = pcap_frames((dir / (std::string("gpu-") + port + ".pcap")).string());
    EXPECT_GT(c.size(), 0u) << port;
    EXPECT_EQ(c, g) << port;
  }
  for (size_t n = 0; n < cpu.nfs.size(); ++n) EXPECT_EQ(cpu.nfs[n].in, gpu.nfs[n].in) << n;
  return gpu.scheduler;
}

// Zero copy: every batch (up to 4096 packets) runs in its pinned host memory.
TEST(GpuStage, FusedZeroCopyBranchyChainEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string chain =
      "{from: in, path: [fw, {nf: r1, next: [ids, done]}, ids], "
      "routes: [{dst: 198.18.0.0/16, at: ingress, next: r1}, {dst: 0.0.0.0/1, at: r1, next: ids}]}";
  compare_backends(config("gpu-branchy-fused-zero-copy",
                          "{name: in, type: generator, size: imix, flows: 2000, count: 100000, "
                          "dst_from: r1}",
                          chain, ", scheduler: unco, gpu_pipeline: fused, gpu_zero_copy_packets: 4096"));
}

TEST(GpuStage, FusedZeroCopyKeepsOrderAcrossStreams) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  replan_under_load_keeps_order("unco", 200000, "fused", 2048);
}

TEST(GpuStage, GnetEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(expect_run_equals_cpu("gpu-gnet-e2e", "scheduler: gnet")["policy"], "gnet");
}

// gnet on the whole-chain pipelines, the executor end to end: the chain's batches planned by
// the model, run in the chain's partition.
TEST(GpuStage, GnetFusedEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = expect_run_equals_cpu("gpu-gnet-fused-e2e", "scheduler: gnet, gpu_pipeline: fused");
  EXPECT_NE(r["line"].get<std::string>().find("chain "), std::string::npos) << r.dump();
}

TEST(GpuStage, GnetPersistentEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = expect_run_equals_cpu(
      "gpu-gnet-persistent-e2e", "scheduler: gnet, gpu_pipeline: persistent, gpu_persistent_packets: 4096", "[fw, r1]");
  EXPECT_GT(r["pcie"]["persistent_batches"].get<uint64_t>(), 0u) << r.dump();
}

TEST(GpuStage, FusedEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  expect_run_equals_cpu("gpu-fused-e2e", "scheduler: unco, gpu_pipeline: fused");
}

// Batches issued by two threads finish in any order; egress still writes them in ingress order.
TEST(GpuStage, FusedIssueThreadsEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r =
      expect_run_equals_cpu("gpu-fused-issuers-e2e", "scheduler: unco, gpu_pipeline: fused, gpu_issue_threads: 2");
  EXPECT_EQ(r["issue_threads"].get<uint32_t>(), 2u) << r.dump();
}

// Graphs end to end: ingress's batches (closed full or on their deadline, so of varied shapes)
// each one graph launch, the output the CPU's.
TEST(GpuStage, FusedGraphsEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r =
      expect_run_equals_cpu("gpu-fused-graphs-e2e", "scheduler: unco, gpu_pipeline: fused, gpu_graphs: true");
  const nlohmann::json& g = r["gpu_graphs"];
  EXPECT_GT(g["launches"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(g["capture_failures"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(g["launches"].get<uint64_t>(), r["pcie"]["host_batches"].get<uint64_t>()) << r.dump();
}

// The persistent pipeline's kernels run from start() on: every pinned batch is made first (a
// cudaHostAlloc beside them could wait for them for ever), as the executor makes its pool.
// Runs the input through run_chain_cpu and the GPU stage, all batches submitted at once, and
// compares them; `beside` runs on its own thread meanwhile. Returns the stage's report.
nlohmann::json persistent_equals_cpu(const std::string& cfg_path, const Beside& beside = {}) {
  RuntimeConfig rc = load_runtime_config(cfg_path);
  auto [shape, pairs] = pairs_run_on_cpu(rc);
  auto stage = make_gpu_stage(rc, shape);
  std::vector<Batch*> batches;
  for (auto& b : pairs.gpu) batches.push_back(b.get());
  stage->prepare_for_persistent_kernels(batches);  // their device copies (larger batches)
  std::atomic<bool> stop{false};
  std::thread beside_thread;
  if (beside) beside_thread = std::thread([&] { beside(rc, stop); });
  run_all_on_stage(*stage, pairs.gpu);
  stop = true;
  if (beside_thread.joinable()) beside_thread.join();
  nlohmann::json r;
  stage->report(r);
  EXPECT_GT(expect_pairs_equal(pairs), 0u);
  return r;
}

std::string persistent_config(const std::string& name, uint32_t packets, const std::string& path,
                              uint32_t in_place, uint32_t zero_copy = 0,
                              const std::string& scheduler = "unco") {
  return config(name,
                "{name: in, type: generator, size: imix, flows: 2000, count: " + std::to_string(packets) +
                    ", dst_from: r1}",
                "{from: in, path: " + path + ", to: p1}",
                ", scheduler: " + scheduler + ", gpu_pipeline: persistent, gpu_persistent_packets: " +
                    std::to_string(in_place) + ", gpu_zero_copy_packets: " + std::to_string(zero_copy));
}

// All 25 batches (up to 4096 packets) submitted at once: the first 4 fill the persistent
// kernel's slots, and each later one waits for the oldest slot rather than being issued fused
// (which would take longer, and hold up the slots' batches behind it). All run in the kernel
// and come back in order, the output the CPU's.
TEST(GpuStage, PersistentPipelineRouterEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = persistent_equals_cpu(persistent_config("gpu-persistent", 100000, "[r1]", 4096));
  const uint64_t batches = (100000u + 4095) / 4096;
  EXPECT_EQ(r["pcie"]["persistent_batches"].get<uint64_t>(), batches) << r.dump();
  EXPECT_EQ(r["pcie"]["zero_copy_batches"].get<uint64_t>(), batches) << r.dump();
  EXPECT_EQ(r["pcie"]["host_batches"].get<uint64_t>(), 0u) << r.dump();
}

// Batches above gpu_persistent_packets are issued as fused ones beside the kernel's: 24 full
// batches issued, the last (1,696 packets) in the kernel, all back in order.
TEST(GpuStage, PersistentPipelineIssuesLargerBatchesInOrder) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = persistent_equals_cpu(persistent_config("gpu-persistent-mixed", 100000, "[r1]", 2048));
  EXPECT_EQ(r["pcie"]["persistent_batches"].get<uint64_t>(), 1u) << r.dump();
  EXPECT_EQ(r["pcie"]["host_batches"].get<uint64_t>(), 24u) << r.dump();
}

// The firewall and the router in the kernel: verdicts, next hops and the firewall's results.
TEST(GpuStage, PersistentPipelineFirewallAndRouterEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = persistent_equals_cpu(persistent_config("gpu-persistent-fw", 100000, "[fw, r1]", 4096));
  EXPECT_EQ(r["pcie"]["persistent_batches"].get<uint64_t>(), (100000u + 4095) / 4096) << r.dump();
}

// A chain with an NF that has no device packet function (here the NIDS) is issued as under
// gpu_pipeline: fused (here with gpu_zero_copy_packets: 4096, so in place).
TEST(GpuStage, PersistentPipelineIssuesOtherChainsAsFused) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r =
      persistent_equals_cpu(persistent_config("gpu-persistent-other", 100000, "[fw, r1, ids]", 4096, 4096));
  EXPECT_EQ(r["pcie"]["persistent_batches"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(r["pcie"]["zero_copy_batches"].get<uint64_t>(), (100000u + 4095) / 4096) << r.dump();
}

// gnet on the persistent pipeline: the chain's kernel runs in the chain's partition, and the
// re-plans every 2 ms keep the partitions (a context made beside the spinning kernel could wait
// for it for ever): no new partition, no lane move; the kernel's batches and the fused ones
// (above gpu_persistent_packets) come back in order, the output the CPU's.
TEST(GpuStage, GnetPersistentReplanUnderLoadEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string model =
      write_model(temp_dir("gpu-gnet-persistent-model"), {{"fw", "firewall"}, {"r1", "router"}});
  const std::string cfg =
      persistent_config("gpu-gnet-persistent", 1000000, "[fw, r1]", 2048, 0, "gnet, model: " + model);
  setenv("GPUNFV_DEBUG_REPLAN_MS", "2", 1);
  const nlohmann::json r = persistent_equals_cpu(cfg);
  unsetenv("GPUNFV_DEBUG_REPLAN_MS");
  EXPECT_EQ(r["pcie"]["persistent_batches"].get<uint64_t>(), 1u) << r.dump();  // the last, short one
  EXPECT_GT(r["pcie"]["host_batches"].get<uint64_t>(), 0u) << r.dump();
  EXPECT_GE(r["plans"].size(), 3u) << r.dump();
  EXPECT_EQ(r["partition_builds"].get<uint64_t>(), 1u) << r.dump();
  EXPECT_EQ(r["lane_moves"].get<uint64_t>(), 0u) << r.dump();
}

// Route updates while the kernel serves batches: each batch pins the table copy its view
// points at until it is back, so an update never rewrites a copy a batch still reads.
TEST(GpuStage, PersistentPipelineBesideRouteUpdatesEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  uint64_t updates = 0;
  const Beside toggle = route_toggler(updates);
  persistent_equals_cpu(persistent_config("gpu-persistent-updates", 200000, "[r1]", 4096), toggle);
  EXPECT_GT(updates, 0u);
}

// The executor end to end with batches closed on their deadline, of every size.
TEST(GpuStage, PersistentPipelineEndToEndEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const nlohmann::json r = expect_run_equals_cpu(
      "gpu-persistent-e2e", "scheduler: unco, gpu_pipeline: persistent, gpu_persistent_packets: 4096", "[r1]");
  EXPECT_GT(r["pcie"]["persistent_batches"].get<uint64_t>(), 0u) << r.dump();
}

TEST(GpuStage, ExecutorCountsEqualCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::string cfg = config("gpu-exec", "{name: in, type: pcap, rx: " + source_dir() +
                                           "/data/traces/SIP_CALL_RTP_G711.pcap}");
  RuntimeConfig a = load_runtime_config(cfg), b = load_runtime_config(cfg);
  RunStats cpu = run(a, RunOptions{Backend::cpu, 0, nullptr});
  RunStats gpu = run(b, RunOptions{Backend::gpu, 0, nullptr});
  EXPECT_EQ(gpu.accounting_errors(), "");
  for (size_t p = 0; p < cpu.ports.size(); ++p) {
    EXPECT_EQ(cpu.ports[p]->tx_packets, gpu.ports[p]->tx_packets);
    EXPECT_EQ(cpu.ports[p]->dropped.by_reason, gpu.ports[p]->dropped.by_reason);
  }
  EXPECT_EQ(cpu.nfs[0].drops.by_reason, gpu.nfs[0].drops.by_reason);
}

}  // namespace
}  // namespace gpunfv
#endif
