// The Firewall's GPU backend equals its CPU backend, bit for bit: verdicts, chain positions and
// the results slice, on headers generated from a 10k ClassBench set. Skipped where no CUDA
// device is present; scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "gpu/device.h"

#include <cstring>
#include <vector>

#include "chain/executor.h"
#include "config/config.h"
#include "core/parse.h"
#include "gpu/device_buffer.h"
#include "nf/firewall/firewall.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/gpu_equals_cpu.h"
#include "tests/nf/firewall/firewall_test_util.h"

namespace gpunfv {
namespace {

bool have_device() { return cuda_device_available(); }

// Frames for `tuples`: every 16th a non-first fragment, every 64th not IPv4 (ARP).
std::vector<std::vector<uint8_t>> frames_of(const std::vector<FiveTuple>& tuples) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < tuples.size(); ++i) {
    if (i % 64 == 63) {
      std::vector<uint8_t> arp(60, 0);
      arp[12] = 0x08;
      arp[13] = 0x06;
      out.push_back(arp);
      continue;
    }
    out.push_back(fwtest::ipv4_frame(tuples[i], i % 16 == 15 ? 100 : 0));
  }
  return out;
}

TEST(GpuFirewall, TenThousandRuleSetEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto rules = read_classbench_file(fwtest::data_dir() + "/classbench_neurocuts/fw1_10k.gz");
  // Mixed actions, so both verdicts occur: every third rule accepts.
  for (size_t i = 0; i < rules.size(); i += 3) rules[i].action = FirewallAction::accept;
  const auto matches = match_parts(rules);
  Firewall fw("fw", rules, FirewallAction::drop, FirewallAction::drop);
  fw.set_result_offset(4);  // a slice after another NF's, as in a chain
  fw.prepare(Backend::gpu);

  const auto tuples = fwtest::generate_headers(matches, 60000, 11);
  const auto frames = frames_of(tuples);
  const uint32_t n = uint32_t(frames.size());
  Batch cpu(n, 128, MemoryKind::host, 8);
  cpu.set_count(n);
  BatchView v = cpu.view();
  for (uint32_t i = 0; i < n; ++i) {
    std::memcpy(v.data.framework_data() + size_t(i) * v.stride, frames[i].data(), frames[i].size());
    v.len[i] = uint16_t(frames[i].size());
    v.out_port[i] = kNoPort;
    v.next_nf[i] = 0;
    v.verdict[i] = uint8_t(parse_headers(PacketRef(v, i).frame(), v.headers[i]));
    ASSERT_EQ(v.verdict[i], 0) << i;
  }
  std::memset(v.results.framework_data(), 0xAB, size_t(n) * 8);

  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const std::unique_ptr<Batch> gpu = fixtures::run_on_gpu(fw, cpu, 0, GpuStream{stream, 0, 256});
  fw.release_gpu_lane(stream);
  cudaStreamDestroy(stream);
  fw.process(v, 0, n, 0);
  ASSERT_EQ(fixtures::expect_batches_equal(cpu, *gpu), n);

  const BatchView g = gpu->view();
  size_t dropped = 0, matched = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t rule;
    std::memcpy(&rule, g.results.framework_data() + size_t(i) * 8 + 4, 4);
    // And both are the linear scan's answer for what the packet carries.
    uint32_t want = i % 64 == 63 ? kNotIpv4
                                 : first_match_linear(matches, fwtest::as_seen(tuples[i], i % 16 == 15 ? 100 : 0));
    ASSERT_EQ(rule, want) << i;
    dropped += g.verdict[i] != 0;
    matched += rule < matches.size();
  }
  EXPECT_GT(dropped, n / 10);
  EXPECT_LT(dropped, n - n / 10);
  EXPECT_GT(matched, n / 2);
}

// The whole example chain through the executor on both backends: same counts, same rule_hits.
TEST(GpuFirewall, ExampleChainReportEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto dir = testing::temp_dir("firewall-gpu-chain");
  std::string cfg = testing::write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: pcap, rx: )" + testing::source_dir() + R"(/data/traces/SIP_CALL_RTP_G711.pcap, repeat: 4}
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
  - {name: fw, type: firewall, rules: )" + testing::source_dir() + R"(/data/firewall/example.rules,
     default: drop}
  - {name: r1, type: router, routes: )" + testing::source_dir() + R"(/data/router/example.routes}
chains:
  - {from: in, path: [fw, r1]}
settings: {batch_size: 512}
)");
  RuntimeConfig a = load_runtime_config(cfg), b = load_runtime_config(cfg);
  RunStats cpu = run(a, RunOptions{Backend::cpu, 0, nullptr});
  RunStats gpu = run(b, RunOptions{Backend::gpu, 0, nullptr});
  EXPECT_EQ(gpu.accounting_errors(), "");
  EXPECT_EQ(cpu.nfs[0].drops.by_reason, gpu.nfs[0].drops.by_reason);
  EXPECT_EQ(cpu.nfs[1].drops.by_reason, gpu.nfs[1].drops.by_reason);
  EXPECT_EQ(cpu.nf_reports[0], gpu.nf_reports[0]);
  for (size_t p = 0; p < cpu.ports.size(); ++p)
    EXPECT_EQ(cpu.ports[p]->tx_packets, gpu.ports[p]->tx_packets) << p;
}

}  // namespace
}  // namespace gpunfv
#endif
