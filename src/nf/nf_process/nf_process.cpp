#include "nf/nf_process/nf_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

constexpr int kFirstChildFd = 3;  // the sockets, then the shared memory
constexpr int kReadyTimeoutMs = 30000;

size_t connections() {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<size_t>(cores, 2, 16);
}

}  // namespace

// A started process: its connections, closed when the last call using them is over.
struct NfProcess::Child {
  pid_t pid = -1;
  std::vector<int> socks;
  std::vector<bool> busy;  // guarded by NfProcess::m_
  ~Child() {
    for (int s : socks) close(s);
  }
};

void NfProcess::set_executable(std::string path) { executable() = std::move(path); }

NfProcess::NfProcess(std::string name, std::string config_path)
    : name_(std::move(name)), config_path_(std::move(config_path)) {}

NfProcess::~NfProcess() {
  {
    std::lock_guard<std::mutex> lk(m_);
    stopping_ = true;
  }
  restart_.notify_all();
  if (restarter_.joinable()) restarter_.join();
  if (child_) lost_.push_back(child_->pid);
  child_.reset();  // its sockets close: the process reads the end of its requests and exits
  for (pid_t pid : lost_) reap(pid);
}

// Waits for the process to exit; one that does not within 2 s is killed.
void NfProcess::reap(pid_t pid) {
  if (pid <= 0) return;
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) != 0) return;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

std::shared_ptr<NfProcess::Child> NfProcess::spawn(bool mid_run) const {
  auto c = std::make_shared<Child>();
  std::vector<int> theirs;
  for (size_t k = 0; k < connections(); ++k) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      for (int s : theirs) close(s);
      throw std::runtime_error("NF process " + name_ + ": socketpair failed");
    }
    c->socks.push_back(sv[0]);
    theirs.push_back(sv[1]);
  }
  c->busy.assign(c->socks.size(), false);
  const SharedArena& arena = SharedArena::instance();
  const int arena_fd = kFirstChildFd + int(theirs.size());
  const std::string exe = executable();
  std::vector<std::string> args = {exe, "nf-process", config_path_, "--process", name_,
                                   "--socket", std::to_string(kFirstChildFd), "--sockets",
                                   std::to_string(theirs.size()), "--arena", std::to_string(arena_fd),
                                   "--arena-bytes", std::to_string(arena.size())};
  if (mid_run) args.push_back("--mid-run");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (size_t k = 0; k < theirs.size(); ++k)
    posix_spawn_file_actions_adddup2(&fa, theirs[k], kFirstChildFd + int(k));
  posix_spawn_file_actions_adddup2(&fa, arena.fd(), arena_fd);
  const int err = posix_spawn(&c->pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  for (int s : theirs) close(s);
  if (err != 0) throw std::runtime_error("NF process " + name_ + ": cannot start " + exe);
  pollfd p{c->socks[0], POLLIN, 0};
  Ready ready;
  if (poll(&p, 1, kReadyTimeoutMs) != 1 || !nf_process::recv_all(c->socks[0], &ready, sizeof ready) ||
      ready.magic != Ready{}.magic) {
    const pid_t pid = c->pid;
    c.reset();
    reap(pid);
    throw std::runtime_error("NF process " + name_ + " did not start (its errors are above)");
  }
  return c;
}

void NfProcess::start() {
  std::lock_guard<std::mutex> lk(m_);
  if (started_) return;
  child_ = spawn(false);
  pid_ = child_->pid;
  started_ = true;
  restarter_ = std::thread([this] { restart_loop(); });
}

// Calls still in flight on the other connections are woken (their sockets shut down) and fail.
void NfProcess::lose() {
  for (int s : child_->socks) shutdown(s, SHUT_RDWR);
  lost_.push_back(child_->pid);
  child_.reset();
  restart_.notify_all();
  free_.notify_all();
}

bool NfProcess::call(const Request& req, const std::string& text, std::string* reply) {
  std::shared_ptr<Child> c;
  size_t k = 0;
  {
    std::unique_lock<std::mutex> lk(m_);
    free_.wait(lk, [&] {
      return !child_ || std::find(child_->busy.begin(), child_->busy.end(), false) != child_->busy.end();
    });
    if (!child_) return false;
    c = child_;
    k = size_t(std::find(c->busy.begin(), c->busy.end(), false) - c->busy.begin());
    c->busy[k] = true;
  }
  Request r = req;
  r.text_bytes = uint32_t(text.size());
  Reply rep;
  std::string answer;
  const int fd = c->socks[k];
  const bool ok = nf_process::send_all(fd, &r, sizeof r) &&
                  (text.empty() || nf_process::send_all(fd, text.data(), text.size())) &&
                  nf_process::recv_all(fd, &rep, sizeof rep) &&
                  nf_process::recv_text(fd, rep.text_bytes, answer);
  {
    std::lock_guard<std::mutex> lk(m_);
    c->busy[k] = false;
    if (!ok && child_ == c) lose();
  }
  free_.notify_one();
  if (!ok) return false;
  if (!rep.ok) throw std::runtime_error("NF process " + name_ + ": " + answer);
  if (reply) *reply = std::move(answer);
  return true;
}

void NfProcess::restart_loop() {
  std::unique_lock<std::mutex> lk(m_);
  while (true) {
    restart_.wait(lk, [&] { return stopping_ || !child_; });
    if (stopping_) return;
    std::vector<pid_t> gone;
    gone.swap(lost_);
    lk.unlock();
    for (pid_t pid : gone) reap(pid);
    if (!gone.empty())  // not again on a retry
      std::fprintf(stderr, "gpunfv: NF process %s was lost: its packets are dropped as "
                   "nf_process_lost until it is back; starting it again\n", name_.c_str());
    std::shared_ptr<Child> c;
    try {
      c = spawn(true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpunfv: %s; trying again in 1 s\n", e.what());
      lk.lock();
      restart_.wait_for(lk, std::chrono::seconds(1), [&] { return stopping_; });
      continue;
    }
    lk.lock();
    if (stopping_) {
      lost_.push_back(c->pid);
      return;
    }
    child_ = c;
    pid_ = c->pid;
    ++restarts_;
    free_.notify_all();
  }
}

nlohmann::json NfProcess::report() const {
  std::lock_guard<std::mutex> lk(m_);
  return {{"pid", pid_}, {"restarts", restarts_}};
}

}  // namespace gpunfv
