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

}  // namespace gpunfv
