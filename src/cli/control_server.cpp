#include "cli/control_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/stop_signals.h"
#include "core/error.h"
#include "core/thread_name.h"

namespace gpunfv {

namespace {

constexpr int kPollMs = 100;

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

// Whether someone accepts connections at `path` now.
bool someone_listens(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a = address_of(path);
  const bool live = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return live;
}

// Writes all of `s`; false if the client went away.
bool send_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

bool reply(int fd, const nlohmann::json& j) { return send_all(fd, j.dump() + "\n"); }

}  // namespace

ControlServer::ControlServer(const std::string& path, ControlCommands& commands)
    : path_(path), commands_(commands) {
  install_reload_signal();
  if (path_.empty()) return;
  struct stat st;
  if (lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw ConfigError(path_, "control: a file that is not a socket is there");
    if (someone_listens(path_)) throw ConfigError(path_, "control: another process serves this socket");
    unlink(path_.c_str());
  }
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw ConfigError(path_, std::string("control: socket: ") + std::strerror(errno));
  sockaddr_un a = address_of(path_);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listen_fd_, 4) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd_);
    listen_fd_ = -1;
    throw ConfigError(path_, "control: cannot listen: " + why);
  }
}

ControlServer::~ControlServer() { stop(); }

void ControlServer::start() {
  thread_ = std::thread([this] { loop(); });
}

void ControlServer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    unlink(path_.c_str());
  }
}

void ControlServer::loop() {
  set_thread_name("gn-control");
  while (!stopping()) {
    if (take_reload_request()) {
      const nlohmann::json r = commands_.reload();
      std::fprintf(stderr, "gpunfv: SIGHUP: %s\n", r.dump().c_str());
    }
    if (listen_fd_ < 0) {
      usleep(kPollMs * 1000);
      continue;
    }
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, kPollMs) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    serve(fd);
    close(fd);
  }
}

void ControlServer::serve(int fd) {
  std::string buf;
  int idle_ms = 0;
  char chunk[4096];
  while (!stopping()) {
    // Every complete line in the buffer is a request.
    size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
      const nlohmann::json answer =
          request.is_discarded()
              ? nlohmann::json{{"ok", false}, {"error", "not a JSON request line"}}
              : commands_.execute(request);
      if (!reply(fd, answer)) return;
      if (take_reload_request())
        std::fprintf(stderr, "gpunfv: SIGHUP: %s\n", commands_.reload().dump().c_str());
    }
    if (buf.size() > kMaxLine) {
      reply(fd, {{"ok", false}, {"error", "request line longer than " + std::to_string(kMaxLine) + " bytes"}});
      return;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, kPollMs);
    if (ready <= 0) {
      if ((idle_ms += kPollMs) >= kIdleSeconds * 1000) {
        reply(fd, {{"ok", false}, {"error", "idle for " + std::to_string(kIdleSeconds) + " s: closing"}});
        return;
      }
      if (take_reload_request())
        std::fprintf(stderr, "gpunfv: SIGHUP: %s\n", commands_.reload().dump().c_str());
      continue;
    }
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0 && !buf.empty() && buf.size() <= kMaxLine) {  // a last request without its newline
      buf.push_back('\n');
      continue;
    }
    if (n <= 0) return;  // the client closed (or failed)
    idle_ms = 0;
    buf.append(chunk, size_t(n));
  }
}

}  // namespace gpunfv
