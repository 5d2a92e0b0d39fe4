#include "chain/live_metrics.h"

#include <gtest/gtest.h>

#include <thread>

#include "chain/executor.h"
#include "config/config.h"
#include "core/error.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

std::string router_config(const std::string& name) {
  auto dir = temp_dir(name);
  return write_file(dir / "c.yaml", R"(
ports:
  - {name: in, type: generator, rate: 400kpps, size: 64-256, count: 200000, dst_from: r1}
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
  - {name: r1, type: router, routes: )" + source_dir() + R"(/data/router/example.routes}
chains:
  - {from: in, path: [r1]}
settings: {batch_size: 256, workers: 1}
)");
}

uint64_t sum(const nlohmann::json& a) {
  uint64_t t = 0;
  for (const auto& v : a) t += v.get<uint64_t>();
  return t;
}

// Readings taken while the run goes on never go backwards, never pass the final figures, and
// the board ends with exactly the report's figures.
TEST(LiveMetrics, ReadingsGrowToTheFinalFigures) {
  RuntimeConfig rc = load_runtime_config(router_config("live-metrics"));
  MetricsBoard board;
  RunOptions opt{Backend::cpu, 0, nullptr};
  opt.metrics = &board;
  std::atomic<bool> finished{false};
  RunStats stats;
  std::thread runner([&] {
    stats = run(rc, opt);
    finished = true;
  });
  std::vector<MetricsSnapshot> seen;
  while (!finished) {
    if (auto m = board.current(); m && !m->finished) seen.push_back(std::move(*m));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  runner.join();
  ASSERT_EQ(stats.accounting_errors(), "");
  const std::optional<MetricsSnapshot> fin = board.current();
  ASSERT_TRUE(fin && fin->finished);
  EXPECT_EQ(fin->ports[0].rx_packets, 200000u);
  EXPECT_EQ(fin->ports[0].rx_packets, stats.ports[0]->rx_packets.load());
  EXPECT_EQ(fin->ports[1].tx_packets + fin->ports[2].tx_packets, stats.total_tx());
  EXPECT_EQ(fin->nfs[0].in, stats.nfs[0].in);
  EXPECT_EQ(fin->nfs[0].drops.by_reason, stats.nfs[0].drops.by_reason);
  EXPECT_EQ(fin->chains[0].latency.count(), stats.latency.count());
  EXPECT_EQ(fin->latency.sum(), stats.latency.sum());
  ASSERT_EQ(fin->stages.size(), 1u);
  EXPECT_EQ(fin->stages[0].nf, "r1");
  MetricsSnapshot last;
  last.ports.resize(3);
  last.nfs.resize(1);
  last.chains.resize(1);
  for (const MetricsSnapshot& m : seen) {
    ASSERT_EQ(m.ports.size(), 3u);
    for (size_t p = 0; p < 3; ++p) {
      EXPECT_GE(m.ports[p].rx_packets, last.ports[p].rx_packets);
      EXPECT_GE(m.ports[p].tx_packets, last.ports[p].tx_packets);
      EXPECT_LE(m.ports[p].tx_packets, fin->ports[p].tx_packets);
    }
    EXPECT_GE(m.nfs[0].in, last.nfs[0].in);
    EXPECT_LE(m.nfs[0].in, fin->nfs[0].in);
    EXPECT_GE(m.chains[0].latency.count(), last.chains[0].latency.count());
    EXPECT_EQ(m.chains[0].latency.count(), m.latency.count());
    last = m;
  }
  // The time series adds up to the totals, port by port and NF by NF.
  const nlohmann::json& ts = stats.timeseries;
  ASSERT_TRUE(ts.is_object());
  EXPECT_GE(ts["t_s"].size(), 1u);
  EXPECT_EQ(sum(ts["ports"]["in"]["rx_packets"]), 200000u);
  EXPECT_EQ(sum(ts["ports"]["p1"]["tx_packets"]), stats.ports[1]->tx_packets.load());
  EXPECT_EQ(sum(ts["ports"]["in"]["dropped"]), stats.ports[0]->dropped.total());
  EXPECT_EQ(sum(ts["nfs"]["r1"]["in"]), stats.nfs[0].in);
  EXPECT_EQ(sum(ts["nfs"]["r1"]["drops"]), stats.nfs[0].drops.total());
}

TEST(LiveMetrics, MetricsSettingsAreChecked) {
  auto dir = temp_dir("metrics-settings");
  auto load = [&](const std::string& metrics) {
    return load_runtime_config(write_file(dir / "c.yaml", "ports:\n  - {name: in, type: pcap, rx: " + source_dir() +
                                                          "/data/traces/dns.cap}\n  - {name: out, type: discard}\n"
                                                          "chains:\n  - {from: in, path: [], to: out}\n"
                                                          "settings:\n  metrics: " + metrics + "\n"));
  };
  const MetricsSettings m = load("{listen: '[::1]:9464', linger_s: 2.5}").settings.metrics;
  EXPECT_EQ(m.host, "::1");
  EXPECT_EQ(m.port, 9464);
  EXPECT_EQ(m.linger_s, 2.5);
  EXPECT_EQ(load("{listen: 0.0.0.0:0}").settings.metrics.port, 0);
  for (const char* bad : {"{listen: 9464}", "{listen: 'host:'}", "{listen: ':80'}", "{listen: 'h:70000'}",
                          "{listen: 'h:-1'}", "{listen: 'h:80', linger_s: -1}", "{linger_s: 1}",
                          "{listen: 'h:80', lisen: 1}", "on"}) {
    try {
      load(bad);
      ADD_FAILURE() << "accepted metrics: " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("c.yaml:"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpunfv
