// The GPU backend's figures in the metrics and the time series: each NF's SM share under a
// GPU sharing policy, its GPU busy time, the plan's ingress batch. Skipped where no CUDA device
// is present; scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include <gtest/gtest.h>

#include "chain/executor.h"
#include "config/config.h"
#include "gpu/device.h"
#include "telemetry/prometheus_text.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

TEST(GpuLiveMetrics, SmSharesAndBusyTimeUnderFairSharing) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto dir = temp_dir("gpu-live-metrics");
  write_file(dir / "fw.rules", "@10.0.0.0/12 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n");
  const std::string cfg = write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: generator, size: 64-512, flows: 1000, count: 2000000, dst_from: r1}
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}
  - {name: r1, type: router, routes: )" + source_dir() + R"(/data/router/example.routes}
chains:
  - {from: in, path: [fw, r1]}
settings: {scheduler: fair}
)");
  RuntimeConfig rc = load_runtime_config(cfg);
  MetricsBoard board;
  RunOptions opt{Backend::gpu, 0, nullptr};
  opt.metrics = &board;
  RunStats s = run(rc, opt);
  ASSERT_EQ(s.accounting_errors(), "");
  const std::optional<MetricsSnapshot> m = board.current();
  ASSERT_TRUE(m && m->finished);
  EXPECT_EQ(m->scheduler, "fair");
  ASSERT_EQ(m->stages.size(), 2u);
  double shares = 0;
  for (const StageSample& st : m->stages) {
    EXPECT_GT(st.sm_share, 0.0) << st.nf;
    EXPECT_GT(st.busy_s, 0.0) << st.nf;
    shares += st.sm_share;
  }
  EXPECT_LE(shares, 1.0 + 1e-9);  // fair: disjoint partitions
  EXPECT_NE(prometheus_text(*m).find("gpunfv_scheduler_sm_share{chain=\"in\",nf=\"fw\"}"), std::string::npos);
  const nlohmann::json& ts = s.timeseries;
  ASSERT_TRUE(ts["stages"].contains("in/fw"));
  EXPECT_EQ(ts["stages"]["in/fw"]["sm_share"].size(), ts["t_s"].size());
  EXPECT_EQ(ts["chains"]["in"]["planned_batch"].size(), ts["t_s"].size());
  EXPECT_EQ(ts["chains"]["in"]["planned_batch"][0].get<uint32_t>(), rc.settings.batch_size);  // fair: no plan of its own
  EXPECT_EQ(m->chains[0].planned_batch, rc.settings.batch_size);
  uint64_t rx = 0;
  for (const auto& v : ts["ports"]["in"]["rx_packets"]) rx += v.get<uint64_t>();
  EXPECT_EQ(rx, 2000000u);
}

}  // namespace
}  // namespace gpunfv
#endif  // GPUNFV_HAVE_CUDA
