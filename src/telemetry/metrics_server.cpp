#include "telemetry/metrics_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/thread_name.h"
#include "telemetry/prometheus_text.h"

namespace gpunfv {

namespace {

constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace

MetricsServer::MetricsServer(const std::string& host, int port, const MetricsBoard& board)
    : http_(std::make_unique<httplib::Server>()), host_(host) {
  // One worker thread: scrapes are rare and small; the default pool starts a thread per core.
  http_->new_task_queue = [] { return new httplib::ThreadPool(1); };
  // SO_REUSEADDR only: the library's default, SO_REUSEPORT, would let a second gpunfv bind the
  // same address and the kernel would then spread scrapes over both.
  http_->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http_->Get("/metrics", [&board](const httplib::Request&, httplib::Response& res) {
    std::optional<MetricsSnapshot> m = board.current();
    if (!m) {
      res.status = 503;
      res.set_content("gpunfv: the run has not started yet\n", "text/plain");
      return;
    }
    res.set_content(prometheus_text(*m), kContentType);
  });
  http_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpunfv: metrics at /metrics\n", "text/plain");
  });
  errno = 0;
  port_ = port == 0 ? http_->bind_to_any_port(host) : (http_->bind_to_port(host, port) ? port : -1);
  if (port_ < 0) {
    const int err = errno;
    throw std::runtime_error("settings.metrics: cannot listen on " + host + ":" + std::to_string(port) +
                             (err ? std::string(": ") + std::strerror(err) : std::string()));
  }
  thread_ = std::thread([this] {
    set_thread_name("gn-metrics-http");
    http_->listen_after_bind();
    listen_returned_ = true;
  });
}

MetricsServer::~MetricsServer() {
  // stop() before the listen loop has started would be missed and the loop would never end.
  while (!http_->is_running() && !listen_returned_) std::this_thread::yield();
  http_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string MetricsServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_) + "/metrics";
}

}  // namespace gpunfv
