// Chains fed by a gpuring port under the executor on the GPU backend (placement: device: the
// ring loops as a persistent kernel, the NIC emulator on the copy engine, the chain on the ring
// batches in place) against the same configuration on the CPU backend (placement: host): output
// frames in order, per-port and per-NF counters, drops by reason, NF reports (rule hits, alerts,
// SA counters) and the NIDS alert log equal; every packet accounted for; the slot audit holds;
// no packet byte crossed PCIe except the frames egress sent to host ports or the alert log read.
// Skipped where no CUDA device is present; scripts/gpu-check.sh --suite gpuring-chains runs it.
#if GPUNFV_HAVE_CUDA
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chain/batch_shape.h"
#include "chain/executor.h"
#include "chain/ring_batch_transfer.h"
#include "config/config.h"
#include "gpu/device.h"
#include "io/gpuring/loops/kernel_loading.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

// The ring kernel runs beside the chain's kernels: every kernel of this process must load
// before it starts, and streams must not share its hardware queue (io/gpuring/loops/kernel_loading.h).
// Set before the first CUDA call of the binary (other tests in it start CUDA earlier).
const bool kPersistentKernelEnvironment = [] {
  gpuring::request_persistent_kernel_environment();
  return true;
}();

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

std::vector<std::string> pcap_frames(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> frames;
  for (size_t off = 24; off + 16 <= data.size();) {
    uint32_t incl = 0;
    std::memcpy(&incl, data.data() + off + 8, 4);
    frames.push_back(data.substr(off + 16, incl));
    off += 16 + incl;
  }
  return frames;
}

// Alert lines without their timestamp (a ring packet's wire time is when the rx loop took it).
std::vector<std::string> alert_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  const std::regex ts("\"timestamp\":\"[^\"]*\",");
  for (std::string line; std::getline(f, line);) lines.push_back(std::regex_replace(line, ts, ""));
  return lines;
}

struct Outcome {
  RunStats stats;
  std::map<std::string, std::vector<std::string>> captures;  // by file name
  std::vector<std::string> alerts;
  uint64_t egress_frames = 0;  // frames egress copied out of GPU slots
  size_t metadata_bytes = 0;   // one ring batch's metadata download
};

// The configuration `yaml` (paths relative to its folder) in a folder of its own, run on
// `backend`; `captures` name the pcap files it writes.
Outcome run_in(const std::string& name, const std::string& yaml, Backend backend,
               const std::vector<std::string>& captures) {
  auto dir = temp_dir(name);
  RuntimeConfig rc = load_runtime_config(write_file(dir / "c.yaml", yaml));
  Outcome o;
  const BatchShape shape = plan_batch_shape(rc);
  o.stats = run(rc, RunOptions{backend, 0, nullptr});
  for (const std::string& c : captures) o.captures[c] = pcap_frames((dir / c).string());
  if (std::filesystem::exists(dir / "alerts.json")) o.alerts = alert_lines((dir / "alerts.json").string());
  std::smatch m;
  if (std::regex_search(o.stats.backend_detail, m, std::regex("egress copied ([0-9]+) frames")))
    o.egress_frames = std::stoull(m[1]);
  // The ring batches' capacity: the batch size, at most the slots beyond a ring's descriptors.
  const uint32_t capacity = std::min<uint32_t>(shape.capacity, 3 * 256 - 256);
  o.metadata_bytes = metadata_download_bytes(BatchLayout::make(capacity, 64, shape.result_stride));
  return o;
}

std::string ring_port(uint32_t rings, const std::string& extra = "") {
  return "  - {name: gr, type: gpuring, rings: " + std::to_string(rings) +
         ", ring_size: 256, placement: auto, flow_control: true, source: {type: pcap, rx: " + source_dir() +
         "/data/traces/SIP_CALL_RTP_G711.pcap}" + extra + "}\n";
}

const std::string kNfs = R"(nfs:
  - {name: fw, type: firewall, rules: )" + source_dir() + R"(/data/firewall/example.rules, action: drop, default: accept}
  - name: esp
    type: ipsec
    direction: outbound
    sas:
)" + testing::test_esp_sas() + R"(  - name: ids
    type: nids
    rules: [)" + source_dir() + R"(/data/nids/et_open_2024-04-21/emerging-voip.rules.gz, )" +
                           source_dir() + R"(/data/nids/et_open_2024-04-21/emerging-policy.rules.gz]
    action: alert
    alerts: alerts.json
  - {name: r1, type: router, routes: )" + source_dir() + R"(/data/router/example.routes}
)";

const std::string kHostPorts = "  - {name: p1, type: pcap, tx: p1.pcap}\n  - {name: p2, type: pcap, tx: p2.pcap}\n";

void expect_same_counts(const RunStats& cpu, const RunStats& gpu) {
  ASSERT_EQ(cpu.ports.size(), gpu.ports.size());
  for (size_t p = 0; p < cpu.ports.size(); ++p) {
    const PortCounters &a = *cpu.ports[p], &b = *gpu.ports[p];
    EXPECT_EQ(a.rx_packets, b.rx_packets) << a.name;
    EXPECT_EQ(a.rx_bytes, b.rx_bytes) << a.name;
    EXPECT_EQ(a.tx_packets, b.tx_packets) << a.name;
    EXPECT_EQ(a.tx_bytes, b.tx_bytes) << a.name;
    EXPECT_EQ(a.forwarded, b.forwarded) << a.name;
    EXPECT_EQ(a.dropped.by_reason, b.dropped.by_reason) << a.name;
  }
  ASSERT_EQ(cpu.nfs.size(), gpu.nfs.size());
  for (size_t n = 0; n < cpu.nfs.size(); ++n) {
    EXPECT_EQ(cpu.nfs[n].in, gpu.nfs[n].in) << cpu.nfs[n].name;
    EXPECT_EQ(cpu.nfs[n].out, gpu.nfs[n].out) << cpu.nfs[n].name;
    EXPECT_EQ(cpu.nfs[n].drops.by_reason, gpu.nfs[n].drops.by_reason) << cpu.nfs[n].name;
    // The NF's own report, less where each run wrote its log (each run has its own folder).
    nlohmann::json a = cpu.nf_reports[n], b = gpu.nf_reports[n];
    if (a.is_object()) a.erase("alert_log");
    if (b.is_object()) b.erase("alert_log");
    EXPECT_EQ(a, b) << cpu.nfs[n].name;
  }
}

// What every device run must show: accounted, audited, on the device, no batch uploaded, only
// metadata downloaded.
void expect_device_run(const Outcome& o) {
  EXPECT_EQ(o.stats.accounting_errors(), "");
  EXPECT_NE(o.stats.backend_detail.find("placement device"), std::string::npos) << o.stats.backend_detail;
  EXPECT_NE(o.stats.backend_detail.find("slots audited ok"), std::string::npos) << o.stats.backend_detail;
  // Nothing was set up beside the ring kernel (gpu/persistent_kernel_guard.h).
  EXPECT_EQ(o.stats.backend_detail.find("while the ring kernel ran"), std::string::npos) << o.stats.backend_detail;
  const nlohmann::json& pcie = o.stats.scheduler["pcie"];
  EXPECT_EQ(pcie["h2d_bytes"].get<uint64_t>(), 0u) << pcie.dump();
  EXPECT_EQ(pcie["host_batches"].get<uint64_t>(), 0u) << pcie.dump();
  EXPECT_GT(pcie["device_resident_batches"].get<uint64_t>(), 0u) << pcie.dump();
  EXPECT_EQ(pcie["d2h_bytes"].get<uint64_t>(), pcie["device_resident_batches"].get<uint64_t>() * o.metadata_bytes)
      << pcie.dump();
}

TEST(GpuRingChainOnDevice, RouterEqualsCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const std::string yaml = "ports:\n" + ring_port(1) + kHostPorts + kNfs +
                           "chains:\n  - {from: gr, path: [r1]}\nsettings: {batch_size: 256}\n";
  const Outcome cpu = run_in("ring-router-cpu", yaml, Backend::cpu, {"p1.pcap", "p2.pcap"});
  const Outcome gpu = run_in("ring-router-gpu", yaml, Backend::gpu, {"p1.pcap", "p2.pcap"});
  ASSERT_EQ(cpu.stats.accounting_errors(), "");
  EXPECT_NE(cpu.stats.backend_detail.find("placement host"), std::string::npos);
  expect_device_run(gpu);
  expect_same_counts(cpu.stats, gpu.stats);
  EXPECT_GT(cpu.stats.ports[0]->rx_packets, 4000u);
  for (const char* c : {"p1.pcap", "p2.pcap"}) {
    EXPECT_GT(cpu.captures.at(c).size(), 0u) << c;
    EXPECT_TRUE(cpu.captures.at(c) == gpu.captures.at(c)) << c;  // one ring: arrival order kept
  }
  // Egress copied out exactly the frames it sent to the host's ports.
  EXPECT_EQ(gpu.egress_frames, gpu.stats.ports[1]->tx_packets + gpu.stats.ports[2]->tx_packets);
}

// G-NET's S_d fed by one ring (so IPsec numbers the packets in the same order on both
// backends), the ring port's extra keys `port_extra`: the GPU's output equals the CPU's.
void expect_sd_chain_equals_cpu(const std::string& name, const std::string& port_extra) {
  const std::string yaml = "ports:\n" + ring_port(1, port_extra) + kHostPorts + kNfs +
                           "chains:\n  - {from: gr, path: [fw, esp, ids, r1]}\nsettings: {batch_size: 256}\n";
  const Outcome cpu = run_in(name + "-cpu", yaml, Backend::cpu, {"p1.pcap", "p2.pcap"});
  const Outcome gpu = run_in(name + "-gpu", yaml, Backend::gpu, {"p1.pcap", "p2.pcap"});
  ASSERT_EQ(cpu.stats.accounting_errors(), "");
  expect_device_run(gpu);
  expect_same_counts(cpu.stats, gpu.stats);
  for (const char* c : {"p1.pcap", "p2.pcap"}) EXPECT_TRUE(cpu.captures.at(c) == gpu.captures.at(c)) << c;
  EXPECT_GT(cpu.alerts.size(), 0u);
  EXPECT_EQ(cpu.alerts, gpu.alerts);
  EXPECT_GT(cpu.stats.nfs[0].drops.total(), 0u);  // the firewall dropped some
}

TEST(GpuRingChainOnDevice, FourNfChainEqualsCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  expect_sd_chain_equals_cpu("ring-sd", "");
}

// The emulator's DMA played by GPU threads (dma: sm) beside the ring kernel and the chain's.
TEST(GpuRingChainOnDevice, FourNfChainWithSmDmaEqualsCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  expect_sd_chain_equals_cpu("ring-sd-sm", ", dma: sm");
}

TEST(GpuRingChainOnDevice, PacketsSentBackToTheRingNeverCrossPcie) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  // A firewall, every survivor back out through the ring into its sink.
  const std::string yaml = "ports:\n" + ring_port(1, ", sink: {type: pcap, tx: sink.pcap}") + kHostPorts + kNfs +
                           "chains:\n  - {from: gr, path: [fw], to: gr}\nsettings: {batch_size: 128}\n";
  const Outcome cpu = run_in("ring-back-cpu", yaml, Backend::cpu, {"sink.pcap"});
  const Outcome gpu = run_in("ring-back-gpu", yaml, Backend::gpu, {"sink.pcap"});
  ASSERT_EQ(cpu.stats.accounting_errors(), "");
  expect_device_run(gpu);
  expect_same_counts(cpu.stats, gpu.stats);
  EXPECT_GT(cpu.captures.at("sink.pcap").size(), 4000u);
  EXPECT_GT(cpu.stats.nfs[0].drops.total(), 0u);
  EXPECT_TRUE(cpu.captures.at("sink.pcap") == gpu.captures.at("sink.pcap"));
  EXPECT_EQ(gpu.egress_frames, 0u);
}

TEST(GpuRingChainOnDevice, SeveralRingsEqualCpuAsMultisets) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const std::string yaml = "ports:\n" + ring_port(3) + kHostPorts + kNfs +
                           "chains:\n  - {from: gr, path: [fw, r1]}\nsettings: {batch_size: 64}\n";
  const Outcome cpu = run_in("ring-multi-cpu", yaml, Backend::cpu, {"p1.pcap", "p2.pcap"});
  const Outcome gpu = run_in("ring-multi-gpu", yaml, Backend::gpu, {"p1.pcap", "p2.pcap"});
  ASSERT_EQ(cpu.stats.accounting_errors(), "");
  expect_device_run(gpu);
  expect_same_counts(cpu.stats, gpu.stats);
  for (const char* c : {"p1.pcap", "p2.pcap"}) {
    auto a = cpu.captures.at(c), b = gpu.captures.at(c);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_TRUE(a == b) << c;  // RSS spreads flows over rings; each ring keeps its order
  }
}

TEST(GpuRingChainOnDevice, DurationEndsAnEndlessSourceCleanly) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto dir = temp_dir("ring-duration");
  RuntimeConfig rc = load_runtime_config(write_file(dir / "c.yaml", R"(
ports:
  - {name: gr, type: gpuring, rings: 2, placement: device, rate: 200kpps,
     source: {type: generator, size: 64, flows: 256, duration: 60}}
  - {name: out, type: discard}
chains:
  - {from: gr, path: [], to: out}
)"));
  RunStats s = run(rc, RunOptions{Backend::gpu, 1.0, nullptr});
  EXPECT_EQ(s.accounting_errors(), "");
  EXPECT_GT(s.ports[0]->rx_packets, 1000u);
  EXPECT_NE(s.backend_detail.find("slots audited ok"), std::string::npos) << s.backend_detail;
  EXPECT_LT(s.elapsed_s, 30.0);
}

}  // namespace
}  // namespace gpunfv
#endif
