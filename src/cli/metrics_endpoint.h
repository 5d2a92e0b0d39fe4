// The CLI's side of settings.metrics: starts the endpoint before the run (so an address that
// cannot be bound stops gpunfv before any traffic), hands the run its board, and after the run
// keeps serving the final figures for linger_s, so a Prometheus server scrapes them once more
// (also after a run a signal stopped; the next signal ends the wait, exit status unchanged).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "chain/runtime_config.h"
#include "chain/metrics_board.h"
#include "telemetry/metrics_server.h"

namespace gpunfv {

class MetricsEndpoint {
 public:
  // Throws ConfigError (at `config_file`) when the address cannot be bound.
  MetricsEndpoint(const MetricsSettings& s, const std::string& config_file, bool quiet);
  // nullptr when settings.metrics is not set.
  MetricsBoard* board() { return server_ ? &board_ : nullptr; }
  void linger(const std::atomic<bool>& stop) const;

 private:
  MetricsSettings s_;
  bool quiet_;
  MetricsBoard board_;
  std::unique_ptr<MetricsServer> server_;
};

}  // namespace gpunfv
