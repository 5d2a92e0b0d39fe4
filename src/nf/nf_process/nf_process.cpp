#include "nf/nf_process/nf_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "core/shared_arena.h"
#include "nf/nf_process/internal/protocol.h"

extern char** environ;

namespace gpunfv {

using nf_process::Ready;
using nf_process::Reply;
using nf_process::Request;

namespace {

std::string& executable() {
  static std::string path = "/proc/self/exe";
  return path;
}

constexpr int kChildSocketFd = 3, kChildArenaFd = 4;
constexpr int kReadyTimeoutMs = 30000;

}  // namespace

void NfProcess::set_executable(std::string path) { executable() = std::move(path); }

NfProcess::NfProcess(std::string name, std::string config_path)
    : name_(std::move(name)), config_path_(std::move(config_path)) {}

NfProcess::~NfProcess() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (restarter_.joinable()) restarter_.join();
  for (Child c : lost_) end(c);
  end(child_);
}

// The socket closed, the process exits on its own (it reads the end of its requests); one that
// does not within 2 s is killed.
void NfProcess::end(Child c) {
  if (c.sock >= 0) close(c.sock);
  if (c.pid <= 0) return;
  for (int i = 0; i < 200; ++i) {
    if (waitpid(c.pid, nullptr, WNOHANG) != 0) return;
    usleep(10000);
  }
  kill(c.pid, SIGKILL);
  waitpid(c.pid, nullptr, 0);
}

NfProcess::Child NfProcess::spawn() const {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::runtime_error("NF process " + name_ + ": socketpair failed");
  const SharedArena& arena = SharedArena::instance();
  const std::string arena_bytes = std::to_string(arena.size());
  const std::string exe = executable();
  std::vector<std::string> args = {exe, "nf-process", config_path_, "--process", name_,
                                   "--socket", std::to_string(kChildSocketFd), "--arena",
                                   std::to_string(kChildArenaFd), "--arena-bytes", arena_bytes};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], kChildSocketFd);
  posix_spawn_file_actions_adddup2(&fa, arena.fd(), kChildArenaFd);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (err != 0) {
    close(sv[0]);
    throw std::runtime_error("NF process " + name_ + ": cannot start " + exe);
  }
  Child c{pid, sv[0]};
  pollfd p{c.sock, POLLIN, 0};
  Ready ready;
  if (poll(&p, 1, kReadyTimeoutMs) != 1 || !nf_process::recv_all(c.sock, &ready, sizeof ready) ||
      ready.magic != Ready{}.magic) {
    end(c);
    throw std::runtime_error("NF process " + name_ + " did not start (its errors are above)");
  }
  return c;
}

void NfProcess::start() {
  std::lock_guard<std::mutex> lk(m_);
  if (started_) return;
  child_ = spawn();
  started_ = alive_ = true;
  restarter_ = std::thread([this] { restart_loop(); });
}

void NfProcess::lose() {
  alive_ = false;
  lost_.push_back(child_);
  child_ = {};
  cv_.notify_all();
}

bool NfProcess::call(const Request& req, const std::string& text, std::string* reply) {
  std::lock_guard<std::mutex> lk(m_);
  if (!alive_) return false;
  Request r = req;
  r.text_bytes = uint32_t(text.size());
  Reply rep;
  std::string answer;
  if (!nf_process::send_all(child_.sock, &r, sizeof r) ||
      (!text.empty() && !nf_process::send_all(child_.sock, text.data(), text.size())) ||
      !nf_process::recv_all(child_.sock, &rep, sizeof rep) ||
      !nf_process::recv_text(child_.sock, rep.text_bytes, answer)) {
    lose();
    return false;
  }
  if (!rep.ok) throw std::runtime_error("NF process " + name_ + ": " + answer);
  if (reply) *reply = std::move(answer);
  return true;
}

void NfProcess::restart_loop() {
  std::unique_lock<std::mutex> lk(m_);
  while (true) {
    cv_.wait(lk, [&] { return stopping_ || !alive_; });
    if (stopping_) return;
    std::vector<Child> gone;
    gone.swap(lost_);
    lk.unlock();
    for (Child c : gone) end(c);
    std::fprintf(stderr, "gpunfv: NF process %s was lost: its packets are dropped as "
                 "nf_process_lost until it is back; starting it again\n", name_.c_str());
    Child c;
    try {
      c = spawn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpunfv: %s; trying again in 1 s\n", e.what());
      lk.lock();
      cv_.wait_for(lk, std::chrono::seconds(1), [&] { return stopping_; });
      continue;
    }
    lk.lock();
    if (stopping_) {
      lost_.push_back(c);
      return;
    }
    child_ = c;
    alive_ = true;
    ++restarts_;
  }
}

nlohmann::json NfProcess::report() const {
  std::lock_guard<std::mutex> lk(m_);
  return {{"pid", child_.pid}, {"restarts", restarts_}};
}

}  // namespace gpunfv
