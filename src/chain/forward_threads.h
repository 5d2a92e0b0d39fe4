// Runs the host `forward:` entries of a configuration, one thread each, beside the chains; merges
// their drops, latency and per-forward figures into the run's stats when they end. Forwards
// between gpuring ports run on their rings instead (chain/gpuring_forward.h).
#pragma once

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "chain/runtime_config.h"
#include "io/forward/forwarder.h"
#include "chain/run_stats.h"

namespace gpunfv {

class ForwardThreads {
 public:
  ForwardThreads(RuntimeConfig& rc, RunStats& stats);
  ~ForwardThreads();
  // Starts one thread per forward; each runs until `stop()` or its source ends.
  void start(std::function<bool()> stop);
  // Joins the threads and merges their counters into the stats.
  void join();

 private:
  RuntimeConfig& rc_;
  RunStats& stats_;
  std::vector<const ForwardSpec*> specs_;  // of forwarders_, in order
  std::vector<std::unique_ptr<Forwarder>> forwarders_;
  std::vector<std::thread> threads_;
  std::function<bool()> stop_;
};

}  // namespace gpunfv
