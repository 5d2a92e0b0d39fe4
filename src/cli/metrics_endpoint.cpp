#include "cli/metrics_endpoint.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "core/clock.h"
#include "cli/stop_signals.h"
#include "core/error.h"

namespace gpunfv {

MetricsEndpoint::MetricsEndpoint(const MetricsSettings& s, const std::string& config_file, bool quiet)
    : s_(s), quiet_(quiet) {
  if (!s.enabled()) return;
  try {
    server_ = std::make_unique<MetricsServer>(s.host, s.port, board_);
  } catch (const std::runtime_error& e) {
    throw ConfigError(config_file, e.what());
  }
  if (!quiet) std::fprintf(stderr, "  metrics: %s\n", server_->url().c_str());
}

void MetricsEndpoint::linger(const std::atomic<bool>& stop) const {
  if (!server_ || s_.linger_s <= 0) return;
  rearm_stop_signals_for_linger();
  if (!quiet_)
    std::fprintf(stderr, "gpunfv: serving the final metrics at %s for %g s (Ctrl-C ends this)\n",
                 server_->url().c_str(), s_.linger_s);
  const uint64_t end = monotonic_ns() + static_cast<uint64_t>(s_.linger_s * 1e9);
  while (!stop && monotonic_ns() < end) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace gpunfv
