// Everything a run counted, for the progress line, the summary table and the JSON report.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/counters.h"
#include "core/latency_histogram.h"

namespace gpunfv {

// What the run counted so far, once a second while it runs (the progress line).
struct ProgressSample {
  double elapsed_s = 0;
  double rx_pps = 0, tx_pps = 0, rx_bps = 0, tx_bps = 0;
  uint64_t rx_total = 0, tx_total = 0, dropped_total = 0;
  // False where some port's bytes are not counted (a forward with count_bytes: off): the bit
  // rate is left out ("-") instead of printing a part of it.
  bool rx_bytes_counted = true, tx_bytes_counted = true;
  uint32_t in_flight = 0, batches = 0;
  std::string detail;  // e.g. the scheduler's current allocation
};

struct RunStats {
  std::string config_file;
  std::string backend;
  std::string backend_detail;
  double elapsed_s = 0;
  std::vector<std::unique_ptr<PortCounters>> ports;  // index = port id
  std::vector<NfCounters> nfs;                       // index = NF index
  std::vector<nlohmann::json> nf_reports;            // NF-specific report keys, per NF
  nlohmann::json processes = nlohmann::json::object();  // NF processes: {NAME: {pid, restarts, hung}}
  LatencyHistogram latency;                          // rx to tx, transmitted packets
  std::vector<LatencyHistogram> chain_latency;       // the same per chain (index = chain)
  uint64_t latency_untimed = 0;  // transmitted packets not timed (a forward's latency_sample)
  nlohmann::json chains = nlohmann::json::array();   // per chain: stage queues, flow control
  nlohmann::json scheduler;                          // GPU sharing policy and allocations
  nlohmann::json egress;                             // egress threads and their CPU time
  std::vector<nlohmann::json> forward_reports;       // one per `forward:` entry (io/forward)
  nlohmann::json timeseries;                         // one sample a second (chain/timeseries.h)

  uint64_t total_rx() const;
  uint64_t total_tx() const;
  uint64_t total_dropped() const;
  // Empty if every packet is accounted for; otherwise what does not add up.
  std::string accounting_errors() const;
};

}  // namespace gpunfv
