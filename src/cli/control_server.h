// The control socket (settings.control): a Unix stream socket served by its own thread while
// `gpunfv run` runs. One client at a time; each request is one line of JSON, each reply one
// line (cli/control_commands.h). A line longer than kMaxLine, invalid JSON or a client idle for
// kIdleSeconds gets an error reply (where it can still be sent) and is disconnected: nothing a
// client sends stops the run or the thread. The same thread serves SIGHUP (reload every table
// file), with or without a socket.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "cli/control_commands.h"

namespace gpunfv {

class ControlServer {
 public:
  static constexpr size_t kMaxLine = 1 << 20;
  static constexpr int kIdleSeconds = 30;

  // Binds `path` now (empty: no socket, SIGHUP only). A stale socket file (no one listening)
  // is replaced; any other file there, or a live socket, is a ConfigError.
  ControlServer(const std::string& path, ControlCommands& commands);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();
  // Stops the thread and removes the socket file.
  void stop();

 private:
  void loop();
  void serve(int fd);
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  std::string path_;
  ControlCommands& commands_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpunfv
