// Where the metrics endpoint finds a run's figures. While the run goes on, the executor sets a
// live source (a function reading the live counters); when it ends, the executor sets the final
// figures, after which the source is never called again, so the executor may be torn down.
// The endpoint's thread calls current(); the packet path never touches the board.
#pragma once

#include <functional>
#include <mutex>
#include <optional>

#include "chain/metrics_snapshot.h"

namespace gpunfv {

class MetricsBoard {
 public:
  using Source = std::function<MetricsSnapshot()>;
  void set_live(Source s);
  // Replaces the live source with the run's final figures; waits for a reading in progress.
  void set_final(MetricsSnapshot m);
  // Drops the live source without final figures (a run that failed).
  void clear();
  // The figures now: a live reading, the final ones, or none before the run starts.
  std::optional<MetricsSnapshot> current() const;

 private:
  mutable std::mutex m_;
  Source live_;
  std::optional<MetricsSnapshot> final_;
};

}  // namespace gpunfv
