// Human and machine output of a run: the progress line (each second), the summary table
// (at the end) and the JSON report (--report FILE).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "chain/run_stats.h"

namespace gpunfv {

std::string format_progress(const ProgressSample& s);
std::string summary_table(const RunStats& s);
nlohmann::json report_json(const RunStats& s);
// The histogram's non-empty buckets as [upper bound ns, count] pairs, in order: a latency CDF
// with the histogram's own resolution (1/16 of a power of two).
nlohmann::json latency_buckets_json(const LatencyHistogram& h);

}  // namespace gpunfv
