#include "telemetry/prometheus_text.h"
#include "nf/router/router_logic.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpunfv {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

MetricsSnapshot sample() {
  MetricsSnapshot m;
  m.finished = true;
  m.backend = "cpu";
  m.config = "a\"b\\c\nd.yaml";  // every character a label value must escape
  PortSample in;
  in.name = "in";
  in.rx_packets = 10, in.rx_bytes = 640, in.forwarded = 7, in.dropped = 3;
  in.drops.add(drop_reason(RouterDrop::no_route), 2);
  in.drops.add(DropReason::not_ipv4, 1);
  PortSample out;
  out.name = "out";
  out.tx_packets = 7, out.tx_bytes = 448;
  out.rx_bytes_counted = false;
  m.ports = {in, out};
  NfSample r{"r1", "router", 10, 8, {}};
  r.drops.add(drop_reason(RouterDrop::no_route), 2);
  m.nfs = {r};
  ChainSample c;
  c.name = "in->out";
  c.latency.record(1000, 3);        // at the first bound (1023 ns)
  c.latency.record(1024, 1);        // just above it
  c.latency.record(5'000'000, 3);
  m.chains = {c};
  m.latency = c.latency;
  StageSample s;
  s.chain = "in->out", s.nf = "r1", s.launches = 4, s.queued_packets = 5, s.slowed = true;
  s.sm_share = 0.5;
  m.stages = {s};
  return m;
}

TEST(PrometheusText, CountersGaugesAndEscapedLabels) {
  const std::string t = prometheus_text(sample());
  EXPECT_TRUE(has_line(t, "# TYPE gpunfv_port_rx_packets_total counter"));
  EXPECT_TRUE(has_line(t, "gpunfv_port_rx_packets_total{port=\"in\"} 10"));
  EXPECT_TRUE(has_line(t, "gpunfv_port_tx_bytes_total{port=\"out\"} 448"));
  EXPECT_TRUE(has_line(t, "gpunfv_port_dropped_packets_total{port=\"in\"} 3"));
  EXPECT_TRUE(has_line(t, "gpunfv_port_drops_total{port=\"in\",reason=\"no_route\"} 2"));
  EXPECT_TRUE(has_line(t, "gpunfv_port_drops_total{port=\"in\",reason=\"not_ipv4\"} 1"));
  EXPECT_TRUE(has_line(t, "gpunfv_nf_drops_total{nf=\"r1\",reason=\"no_route\"} 2"));
  EXPECT_TRUE(has_line(t, "gpunfv_nf_in_packets_total{nf=\"r1\",type=\"router\"} 10"));
  EXPECT_TRUE(has_line(t, "gpunfv_nf_queue_packets{chain=\"in->out\",nf=\"r1\"} 5"));
  EXPECT_TRUE(has_line(t, "gpunfv_nf_backpressure_slowed{chain=\"in->out\",nf=\"r1\"} 1"));
  EXPECT_TRUE(has_line(t, "gpunfv_scheduler_sm_share{chain=\"in->out\",nf=\"r1\"} 0.5"));
  EXPECT_TRUE(has_line(t, "gpunfv_run_finished 1"));
  EXPECT_TRUE(has_line(t, "gpunfv_info{config=\"a\\\"b\\\\c\\nd.yaml\",backend=\"cpu\",scheduler=\"\"} 1"));
  // Bytes a port did not count are left out, not reported as 0.
  EXPECT_EQ(t.find("gpunfv_port_rx_bytes_total{port=\"out\"}"), std::string::npos);
  // Reasons that did not happen have no series.
  EXPECT_EQ(t.find("reason=\"oversize\""), std::string::npos);
}

// An NF with live tables (routes, rules) exports its table's version; others have none.
TEST(PrometheusText, TableVersionOnlyForNfsWithLiveTables) {
  MetricsSnapshot m = sample();
  EXPECT_EQ(prometheus_text(m).find("gpunfv_nf_table_version"), std::string::npos);
  m.nfs[0].table_version = 3;
  NfSample ids{"ids", "nids", 5, 5, {}};
  m.nfs.push_back(ids);
  const std::string t = prometheus_text(m);
  EXPECT_TRUE(has_line(t, "# TYPE gpunfv_nf_table_version gauge"));
  EXPECT_TRUE(has_line(t, "gpunfv_nf_table_version{nf=\"r1\",type=\"router\"} 3"));
  EXPECT_EQ(t.find("gpunfv_nf_table_version{nf=\"ids\""), std::string::npos);
}

TEST(PrometheusText, HistogramBucketsAreExactAndCumulative) {
  const std::string t = prometheus_text(sample());
  const std::string name = "gpunfv_chain_latency_seconds";
  EXPECT_TRUE(has_line(t, "# TYPE " + name + " histogram"));
  EXPECT_TRUE(has_line(t, name + "_bucket{chain=\"in->out\",le=\"1.023e-06\"} 3"));
  EXPECT_TRUE(has_line(t, name + "_bucket{chain=\"in->out\",le=\"1.535e-06\"} 4"));
  EXPECT_TRUE(has_line(t, name + "_bucket{chain=\"in->out\",le=\"+Inf\"} 7"));
  EXPECT_TRUE(has_line(t, name + "_count{chain=\"in->out\"} 7"));
  EXPECT_TRUE(has_line(t, name + "_sum{chain=\"in->out\"} 0.015004024"));
  EXPECT_TRUE(has_line(t, "gpunfv_latency_seconds_count 7"));
}

TEST(PrometheusText, BoundsAreHistogramBucketEdges) {
  uint64_t last = 0;
  for (uint64_t b : prometheus_latency_bounds_ns()) {
    EXPECT_GT(b, last);
    EXPECT_EQ(LatencyHistogram::bucket_upper(LatencyHistogram::bucket_of(b)), b) << b;
    last = b;
  }
  EXPECT_EQ(prometheus_latency_bounds_ns().front(), 1023u);
  EXPECT_EQ(prometheus_latency_bounds_ns().back(), (uint64_t(1) << 36) - 1);
}

}  // namespace
}  // namespace gpunfv
