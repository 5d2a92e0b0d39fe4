// The run's time series (the report's `timeseries`): one sample per second, each the change
// over its interval (packets and bytes per port, NF input and drops, batches, queue occupancy
// integrated over time, GPU busy time) or the state at its end (the scheduler's SM shares and
// planned batch). The last sample covers the run's last partial second, so each counter's
// samples add up to its total in the report. A long run keeps at most kMaxSamples: when full,
// neighbouring samples merge in pairs (the interval doubles; sums stay exact), so memory stays
// bounded over weeks. Built from MetricsSnapshots taken by the executor's sampler thread.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "chain/metrics_snapshot.h"

namespace gpunfv {

class TimeSeries {
 public:
  static constexpr size_t kMaxSamples = 4096;

  // Adds the interval from the previous snapshot (the run's start, all zeros, for the first)
  // to `now`. Snapshots must keep the same ports, NFs, chains and stages.
  void add(const MetricsSnapshot& now);
  size_t samples() const { return rows_.size(); }
  nlohmann::json to_json() const;

 private:
  enum class Kind { sum, last };
  struct Column {
    std::string group, name, field;  // e.g. "ports", "in", "rx_packets"
    Kind kind;
  };
  struct Row {
    double t = 0, dt = 0;
    std::vector<double> v;
  };
  void make_columns(const MetricsSnapshot& m);
  std::vector<double> values(const MetricsSnapshot& m) const;
  void halve();

  std::vector<Column> columns_;
  std::vector<Row> rows_;
  std::optional<MetricsSnapshot> prev_;
  std::vector<bool> bytes_counted_;  // per port: rx, tx
  double interval_s_ = 1;
};

}  // namespace gpunfv
