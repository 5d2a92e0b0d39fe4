// What a run has counted at one moment, in one plain structure: the metrics endpoint's
// exposition (telemetry/prometheus_text.h) and the per-second time series
// (chain/timeseries.h) are both made from it. While the run goes on the executor reads it
// off the live counters (chain/live_metrics.h); when the run has ended it comes from the final
// RunStats (metrics_from_stats), so it then holds exactly the JSON report's figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/counters.h"
#include "core/latency_histogram.h"
#include "chain/run_stats.h"

namespace gpunfv {

struct PortSample {
  std::string name;
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
  bool rx_bytes_counted = true, tx_bytes_counted = true;
  uint64_t forwarded = 0, dropped = 0;
  // By reason as far as known: while running, those egress and ingress counted (a forward's
  // and a gpuring NIC's reasons arrive at the end; `dropped` has them all along).
  DropCounts drops;
};

struct NfSample {
  std::string name, type;
  uint64_t in = 0, out = 0;
  DropCounts drops;
  uint64_t in_bytes = 0, out_bytes = 0;
  int64_t table_version = -1;  // the live table's version (NFs with live tables), else -1
};

// One NF node of one chain: its input queue and what ran it.
struct StageSample {
  std::string chain, nf;
  uint64_t batches = 0, launches = 0, packets = 0;
  uint64_t queued_packets = 0;        // now (0 once the run has drained)
  uint64_t max_queued_packets = 0;
  double queued_packet_seconds = 0;   // occupancy integrated over time
  bool slowed = false;                // backpressure holds the stage off now
  double slowed_s = 0;
  uint64_t slow_down_signals = 0;
  double busy_s = 0;                  // GPU: the stage's stream busy
  double sm_share = -1;               // GPU sharing: share of the SMs its lane may use; -1: none
};

struct ChainSample {
  std::string name;
  LatencyHistogram latency;           // rx to tx, transmitted packets
  uint64_t batches = 0, packets = 0;  // batches that entered the chain and their packets
  uint32_t planned_batch = 0;         // GPU sharing: the plan's ingress batch; 0: none
  bool ingress_paused = false;        // backpressure holds the ingress port off now
};

struct MetricsSnapshot {
  bool finished = false;  // the final figures (the report's), not a live reading
  double elapsed_s = 0;
  std::string backend, config, scheduler;  // scheduler: the GPU policy, "" on the CPU
  LatencyHistogram latency;  // rx to tx, every transmitted packet (chains and forwards)
  std::vector<PortSample> ports;
  std::vector<NfSample> nfs;
  std::vector<ChainSample> chains;
  std::vector<StageSample> stages;  // chain by chain, nodes in path order
};

// The final figures of a run, as its report has them.
MetricsSnapshot metrics_from_stats(const RunStats& s);

}  // namespace gpunfv
