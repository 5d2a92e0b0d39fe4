// The metrics endpoint (settings.metrics.listen): an HTTP server (cpp-httplib) on its own
// thread serving GET /metrics in the Prometheus text format from a MetricsBoard. Each scrape
// reads the board; nothing on the packet path waits for it.
//
// Errors: the constructor throws std::runtime_error when it cannot listen (address in use,
// not an address of this host), naming the address.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "chain/metrics_board.h"

namespace httplib {
class Server;
}

namespace gpunfv {

class MetricsServer {
 public:
  // Binds host:port (port 0: one the system picks, see port()) and starts serving.
  MetricsServer(const std::string& host, int port, const MetricsBoard& board);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  int port() const { return port_; }
  std::string url() const;

 private:
  std::unique_ptr<httplib::Server> http_;
  std::string host_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  std::thread thread_;
};

}  // namespace gpunfv
