// Everything a run counted, for the progress line, the summary table and the JSON report.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "telemetry/counters.h"
#include "telemetry/latency_histogram.h"

namespace gpunfv {

struct RunStats {
  std::string config_file;
  std::string backend;
  std::string backend_detail;
  double elapsed_s = 0;
  std::vector<std::unique_ptr<PortCounters>> ports;  // index = port id
  std::vector<NfCounters> nfs;                       // index = NF index
  std::vector<nlohmann::json> nf_reports;            // NF-specific report keys, per NF
  LatencyHistogram latency;                          // rx to tx, transmitted packets
  std::vector<LatencyHistogram> chain_latency;       // the same per chain (index = chain)
  uint64_t latency_untimed = 0;  // transmitted packets not timed (a forward's latency_sample)
  nlohmann::json chains = nlohmann::json::array();   // per chain: stage queues, flow control
  nlohmann::json scheduler;                          // GPU sharing policy and allocations
  nlohmann::json egress;                             // egress threads and their CPU time
  std::vector<nlohmann::json> forward_reports;       // one per `forward:` entry (io/forward)
  nlohmann::json timeseries;                         // one sample a second (telemetry/timeseries.h)

  uint64_t total_rx() const;
  uint64_t total_tx() const;
  uint64_t total_dropped() const;
  // Empty if every packet is accounted for; otherwise what does not add up.
  std::string accounting_errors() const;
};

}  // namespace gpunfv
