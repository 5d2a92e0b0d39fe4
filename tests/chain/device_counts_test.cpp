// NFs counting on the device (NetworkFunction::count_on_device, gpu/device_counters.h): a chain
// run by the executor on the GPU backend, where the firewall, IPsec and NIDS count rule hits,
// packets per SA and alerts in kernels, reports exactly what the CPU backend's collect() counted;
// and where an NF must stay on the host (NIDS with an alert log) it does, with the same counts.
// The GPU runs are skipped where no CUDA device is present; the CPU run checks the traffic gives
// every counter work.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <memory>
#include <utility>
#include <string>

#include "chain/executor.h"
#include "config/config.h"
#include "gpu/device.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/scoped_env.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

// Firewall (rules that split the traffic: several rules hit, some packets match none), IPsec
// outbound (two SAs, and traffic neither matches), NIDS (rules that fire on the HTTP capture),
// router; `nids_extra` adds keys to the NIDS (an alert log).
std::string chain_config(const std::string& dir_name, const std::string& nids_extra,
                         const std::string& settings) {
  auto dir = temp_dir(dir_name);
  const std::string d = source_dir();
  write_file(dir / "fw.rules",
             "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x0000/0x0000 accept\n"
             "@0.0.0.0/0 10.0.0.0/8 0 : 65535 80 : 80 0x06/0xFF 0x0000/0x0000 accept\n"
             "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n"
             "@200.57.7.0/24 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 0x0000/0x0000 accept\n");
  return write_file(dir / "c.yaml", "ports:\n"
                    "  - {name: web, type: pcap, rx: " + d + "/data/traces/http_with_jpegs.cap, repeat: 4}\n"
                    "  - {name: sip, type: pcap, rx: " + d + "/data/traces/SIP_CALL_RTP_G711.pcap}\n"
                    "  - {name: gen, type: generator, size: 64-600, flows: 300, count: 20000, seed: 7}\n"
                    "  - {name: p1, type: discard}\n"
                    "  - {name: p2, type: discard}\n"
                    "nfs:\n"
                    "  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}\n"
                    "  - name: esp\n"
                    "    type: ipsec\n"
                    "    direction: outbound\n"
                    "    bypass: true\n"
                    "    sas:\n" +
                    testing::test_esp_sas("198.18.0.0/15") +
                    "  - name: ids\n"
                    "    type: nids\n"
                    "    rules: [" + d + "/data/nids/et_open_2024-04-21/emerging-web_server.rules.gz, " + d +
                    "/data/nids/et_open_2024-04-21/emerging-user_agents.rules.gz, " + d +
                    "/data/nids/et_open_2024-04-21/emerging-policy.rules.gz]\n"
                    "    action: alert\n" + nids_extra +
                    "  - name: r1\n"
                    "    type: router\n"
                    "    routes: {file: " + d + "/data/router/bart_ipv4_random5000.txt, spread: [p1, p2]}\n"
                    "chains:\n"
                    "  - {from: web, path: [fw, esp, ids, r1]}\n"
                    "  - {from: sip, path: [fw, ids, r1]}\n"
                    "  - {from: gen, path: [esp, ids, r1]}\n"
                    "settings: {batch_size: 1024, batches: 8" + settings + "}\n");
}

void expect_same_reports(const RunStats& cpu, const RunStats& gpu) {
  EXPECT_EQ(gpu.accounting_errors(), "");
  ASSERT_EQ(cpu.nf_reports.size(), gpu.nf_reports.size());
  for (size_t n = 0; n < cpu.nf_reports.size(); ++n) {
    nlohmann::json a = cpu.nf_reports[n], b = gpu.nf_reports[n];
    if (a.is_object()) a.erase("alert_log");
    if (b.is_object()) b.erase("alert_log");
    EXPECT_EQ(a, b) << cpu.nfs[n].name;
    EXPECT_EQ(cpu.nfs[n].in, gpu.nfs[n].in) << cpu.nfs[n].name;
    EXPECT_EQ(cpu.nfs[n].drops.by_reason, gpu.nfs[n].drops.by_reason) << cpu.nfs[n].name;
  }
}

// The configuration on the CPU backend, then on the GPU backend (whose configuration, with its
// NFs, stays in `gpu_rc`).
std::pair<RunStats, RunStats> run_both(const std::string& cfg, std::unique_ptr<RuntimeConfig>& gpu_rc) {
  RuntimeConfig cpu_rc = load_runtime_config(cfg);
  gpu_rc = std::make_unique<RuntimeConfig>(load_runtime_config(cfg));
  RunStats cpu = run(cpu_rc, RunOptions{Backend::cpu, 0, nullptr});
  RunStats gpu = run(*gpu_rc, RunOptions{Backend::gpu, 0, nullptr});
  return {std::move(cpu), std::move(gpu)};
}

// What the traffic must have made the NFs count, so equal reports are not equal zeros.
void expect_counted(const RunStats& s) {
  const nlohmann::json& fw = s.nf_reports[0];
  EXPECT_GE(fw["rule_hits"].size(), 2u) << fw.dump();
  EXPECT_GT(fw["no_match"].get<uint64_t>(), 0u) << fw.dump();
  uint64_t sa_packets = 0;
  for (const auto& sa : s.nf_reports[1]["sas"]) sa_packets += sa["packets"].get<uint64_t>();
  EXPECT_GT(sa_packets, 0u) << s.nf_reports[1].dump();
  const nlohmann::json& ids = s.nf_reports[2];
  EXPECT_GT(ids["alerts"].get<uint64_t>(), 0u) << ids.dump();
  EXPECT_GT(ids["packets_alerted"].get<uint64_t>(), 0u) << ids.dump();
}

TEST(DeviceCounts, TrafficGivesEveryCounterWork) {
  RuntimeConfig rc = load_runtime_config(chain_config("device-counts-cpu", "", ""));
  RunStats cpu = run(rc, RunOptions{Backend::cpu, 0, nullptr});
  EXPECT_EQ(cpu.accounting_errors(), "");
  expect_counted(cpu);
  for (const auto& nf : rc.nfs) EXPECT_EQ(nf->type() != "router", nf->collects()) << nf->name();
}

TEST(DeviceCounts, ChainsCountedOnTheDeviceEqualCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<RuntimeConfig> b;
  auto [cpu, gpu] = run_both(chain_config("device-counts", "", ""), b);
  expect_counted(cpu);
  expect_same_reports(cpu, gpu);
  // Every counting NF took the offer; the router collects nothing either way.
  for (const auto& nf : b->nfs) EXPECT_FALSE(nf->collects()) << nf->name();
}

TEST(DeviceCounts, EveryPolicyEqualsCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  for (const char* policy : {"temporal", "fair", "unco"}) {
    SCOPED_TRACE(policy);
    std::unique_ptr<RuntimeConfig> b;
    auto [cpu, gpu] = run_both(chain_config(std::string("device-counts-") + policy, "",
                                            std::string(", scheduler: ") + policy), b);
    expect_same_reports(cpu, gpu);
  }
}

// Small batches take other kernels than large ones (IPsec's lanes a packet, the NIDS's chunk
// size; both count inside them): each forced both ways, counts equal the CPU's.
TEST(DeviceCounts, SmallAndLargeBatchKernelsEqualCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  for (const auto& [lanes, chunk] : {std::pair{"1", "32"}, std::pair{"8", "16"}}) {
    SCOPED_TRACE(std::string("IPsec lanes ") + lanes + ", NIDS chunk " + chunk);
    testing::ScopedEnv a("GPUNFV_IPSEC_LANES", lanes), c("GPUNFV_NIDS_CHUNK", chunk);
    std::unique_ptr<RuntimeConfig> b;
    auto [cpu, gpu] = run_both(chain_config(std::string("device-counts-lanes-") + lanes, "", ""), b);
    expect_same_reports(cpu, gpu);
  }
}

TEST(DeviceCounts, NidsWithAnAlertLogCollectsOnTheHost) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  std::unique_ptr<RuntimeConfig> b;
  auto [cpu, gpu] = run_both(chain_config("device-counts-log", "    alerts: alerts.json\n", ""), b);
  expect_counted(cpu);
  expect_same_reports(cpu, gpu);
  EXPECT_FALSE(b->nfs[0]->collects());
  EXPECT_TRUE(b->nfs[2]->collects());  // the log's lines stay in packet order on the host
}

}  // namespace
}  // namespace gpunfv
