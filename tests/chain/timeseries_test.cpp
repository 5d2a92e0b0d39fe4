#include "chain/timeseries.h"

#include <gtest/gtest.h>

namespace gpunfv {
namespace {

MetricsSnapshot at(double t, uint64_t rx, double queue_s, bool gpu = false) {
  MetricsSnapshot m;
  m.elapsed_s = t;
  if (gpu) m.scheduler = "fair";
  PortSample p;
  p.name = "in";
  p.rx_packets = rx, p.rx_bytes = rx * 64, p.dropped = rx / 10;
  m.ports = {p};
  NfSample n{"r1", "router", rx, rx, {}};
  m.nfs = {n};
  ChainSample c;
  c.name = "in";
  c.batches = rx / 100, c.packets = rx, c.planned_batch = gpu ? 256 : 0;
  m.chains = {c};
  StageSample s;
  s.chain = "in", s.nf = "r1", s.queued_packet_seconds = queue_s, s.sm_share = gpu ? 0.25 : -1;
  m.stages = {s};
  return m;
}

uint64_t sum(const nlohmann::json& a) {
  uint64_t t = 0;
  for (const auto& v : a) t += v.get<uint64_t>();
  return t;
}

TEST(TimeSeries, SamplesAreIntervalsThatAddUpToTheTotals) {
  TimeSeries ts;
  ts.add(at(1.0, 1000, 2.0));
  ts.add(at(2.0, 3000, 2.5));
  ts.add(at(2.5, 3500, 2.5));  // the last partial second
  const nlohmann::json j = ts.to_json();
  EXPECT_EQ(j["t_s"], nlohmann::json({1.0, 2.0, 2.5}));
  EXPECT_EQ(j["ports"]["in"]["rx_packets"], nlohmann::json({1000, 2000, 500}));
  EXPECT_EQ(sum(j["ports"]["in"]["rx_bytes"]), 3500u * 64);
  EXPECT_EQ(sum(j["nfs"]["r1"]["in"]), 3500u);
  EXPECT_EQ(j["chains"]["in"]["mean_batch_packets"][0].get<double>(), 100.0);
  EXPECT_EQ(j["stages"]["in/r1"]["mean_queued_packets"], nlohmann::json({2.0, 0.5, 0.0}));
  EXPECT_FALSE(j["stages"]["in/r1"].contains("sm_share"));  // no GPU policy ran
  EXPECT_FALSE(j["chains"]["in"].contains("planned_batch"));
}

TEST(TimeSeries, GpuPolicyAddsSmSharesAndPlannedBatch) {
  TimeSeries ts;
  ts.add(at(1.0, 100, 0, true));
  ts.add(at(2.0, 200, 0, true));
  const nlohmann::json j = ts.to_json();
  EXPECT_EQ(j["stages"]["in/r1"]["sm_share"], nlohmann::json({0.25, 0.25}));
  EXPECT_EQ(j["chains"]["in"]["planned_batch"], nlohmann::json({256, 256}));
}

TEST(TimeSeries, LongRunsMergeSamplesKeepingTheSums) {
  TimeSeries ts;
  const size_t n = TimeSeries::kMaxSamples + 10;
  for (size_t k = 1; k <= n; ++k) ts.add(at(double(k), k * 7, 0));
  EXPECT_LT(ts.samples(), TimeSeries::kMaxSamples);
  const nlohmann::json j = ts.to_json();
  EXPECT_EQ(j["interval_s"].get<double>(), 2.0);
  EXPECT_EQ(sum(j["ports"]["in"]["rx_packets"]), n * 7);
  EXPECT_EQ(j["t_s"].back().get<double>(), double(n));
  double dt = 0;
  for (const auto& v : j["dt_s"]) dt += v.get<double>();
  EXPECT_DOUBLE_EQ(dt, double(n));
}

}  // namespace
}  // namespace gpunfv
