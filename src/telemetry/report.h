// Human and machine output of a run: the progress line (each second), the summary table
// (at the end) and the JSON report (--report FILE).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "telemetry/run_stats.h"

namespace gpunfv {

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

std::string format_progress(const ProgressSample& s);
std::string summary_table(const RunStats& s);
nlohmann::json report_json(const RunStats& s);
// The histogram's non-empty buckets as [upper bound ns, count] pairs, in order: a latency CDF
// with the histogram's own resolution (1/16 of a power of two).
nlohmann::json latency_buckets_json(const LatencyHistogram& h);

}  // namespace gpunfv
