#include "nf/nf_process/nf_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <stdexcept>

#include "core/drop_reason.h"
#include "core/shared_arena.h"
#include "nf/nf_process/internal/manager_calls.h"
#include "nf/nf_process/internal/manager_gpu.h"
#include "nf/nf_process/internal/protocol.h"

extern char** environ;

namespace gpunfv {

using nf_process::CallAnswer;
using nf_process::Ready;
using nf_process::Reply;
using nf_process::ReplyKind;
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

// A started process: its connections, closed when the last call using them is over, and on the
// GPU backend what the Manager made for it.
struct NfProcess::Child {
  pid_t pid = -1;
  std::vector<int> socks;
  std::vector<bool> busy;  // guarded by NfProcess::m_
#if GPUNFV_HAVE_CUDA
  std::unique_ptr<nf_process::ManagerGpu> gpu;
#endif
  ~Child() {
    for (int s : socks) close(s);
  }

  // Reads `fd`'s messages until one that is not a call comes; performs and answers those, and
  // performs the calls that come with the last. False: the process is gone, or sent nothing
  // for `timeout_ms` (then `hung` is set). Throws when the last one's calls fail.
  bool receive(int fd, Reply& rep, std::string& text, int timeout_ms, bool* hung = nullptr) {
    std::string calls;
    while (true) {
      pollfd p{fd, POLLIN, 0};
      int ready;
      while ((ready = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
      }
      if (ready == 0 && hung) *hung = true;
      if (ready != 1 || !nf_process::recv_all(fd, &rep, sizeof rep) ||
          !nf_process::recv_text(fd, rep.text_bytes, text) || !nf_process::recv_text(fd, rep.calls_bytes, calls))
        return false;
      if (rep.kind != ReplyKind::call) {
        perform(calls);
        return true;
      }
      CallAnswer a;
      std::string answer;
      try {
        answer = perform(calls);
      } catch (const std::exception& e) {
        a.ok = 0;
        answer = e.what();
      }
      a.bytes = uint32_t(answer.size());
      if (!nf_process::send_all(fd, &a, sizeof a) || !nf_process::send_all(fd, answer.data(), answer.size()))
        return false;
    }
  }

  // A message's calls, in order; the answer to the last.
  std::string perform(const std::string& calls) {
    nf_process::CallReader reader(calls.data(), calls.size());
    nf_process::CallHead h;
    std::string_view payload;
    std::string answer;
    while (reader.next(h, payload)) {
      if (h.call == nf_process::ManagerCall::drop_reasons) {
        answer = std::string(1, char(drop_codes(payload)));
        continue;
      }
#if GPUNFV_HAVE_CUDA
      if (!gpu) throw std::runtime_error("a GPU call from an NF process on the CPU backend");
      answer = gpu->perform_one(h, payload);
#else
      throw std::runtime_error("a GPU call from an NF process in a build without CUDA");
#endif
    }
    return answer;
  }

  // An NF type's drop reasons get their codes in the Manager's table, as they would here.
  static uint8_t drop_codes(std::string_view payload) {
    static std::mutex m;
    static std::deque<std::string> kept;  // the table keeps pointers: the strings stay
    std::vector<std::string_view> lines;
    while (!payload.empty()) {
      const size_t nl = payload.find('\n');
      if (nl == std::string_view::npos) throw std::runtime_error("malformed drop reasons");
      lines.push_back(payload.substr(0, nl));
      payload.remove_prefix(nl + 1);
    }
    if (lines.size() < 3 || lines.size() % 2 != 1) throw std::runtime_error("malformed drop reasons");
    std::vector<DropReasonDecl> decls;
    {
      std::lock_guard<std::mutex> lk(m);
      for (size_t i = 1; i < lines.size(); i += 2) {
        const char* name = kept.emplace_back(lines[i]).c_str();
        decls.push_back({name, kept.emplace_back(lines[i + 1]).c_str()});
      }
    }
    return add_drop_reasons(lines[0], decls);
  }
};

void NfProcess::set_executable(std::string path) { executable() = std::move(path); }

NfProcess::NfProcess(std::string name, std::string config_path, uint32_t timeout_ms)
    : name_(std::move(name)), config_path_(std::move(config_path)), timeout_ms_(timeout_ms) {}

#if GPUNFV_HAVE_CUDA
void NfProcess::hand(const GpuStream& s) {
  std::lock_guard<std::mutex> lk(m_);
  if (child_ && child_->gpu) child_->gpu->hand(s);
}

void NfProcess::take_back(cudaStream_t s) {
  std::lock_guard<std::mutex> lk(m_);
  if (child_ && child_->gpu) child_->gpu->take_back(s);
}
#endif

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
#if GPUNFV_HAVE_CUDA
  if (backend_ == Backend::gpu) c->gpu = std::make_unique<nf_process::ManagerGpu>();
#endif
  const SharedArena& arena = SharedArena::instance();
  const int arena_fd = kFirstChildFd + int(theirs.size());
  const std::string exe = executable();
  std::vector<std::string> args = {exe, "nf-process", config_path_, "--process", name_,
                                   "--socket", std::to_string(kFirstChildFd), "--sockets",
                                   std::to_string(theirs.size()), "--arena", std::to_string(arena_fd),
                                   "--arena-bytes", std::to_string(arena.size())};
  if (mid_run) args.push_back("--mid-run");
  if (backend_ == Backend::gpu) args.insert(args.end(), {"--backend", "gpu"});
  for (uint32_t i : device_counted_) args.insert(args.end(), {"--count-on-device", std::to_string(i)});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (size_t k = 0; k < theirs.size(); ++k)
    posix_spawn_file_actions_adddup2(&fa, theirs[k], kFirstChildFd + int(k));
  posix_spawn_file_actions_adddup2(&fa, arena.fd(), arena_fd);
  // On the GPU backend the process sees no device: its GPU calls go to the Manager, and any
  // other fails there instead of making a context of its own.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (backend_ != Backend::gpu || std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0)
      env_strings.push_back(*e);
  if (backend_ == Backend::gpu) env_strings.push_back("CUDA_VISIBLE_DEVICES=");
  std::vector<char*> env;
  for (auto& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  const int err = posix_spawn(&c->pid, exe.c_str(), &fa, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  for (int s : theirs) close(s);
  if (err != 0) throw std::runtime_error("NF process " + name_ + ": cannot start " + exe);
  // Its NFs prepare first: on the GPU backend their uploads come as GPU calls meanwhile.
  Reply rep;
  std::string text;
  std::string failed;
  bool ready = false;
  try {
    ready = c->receive(c->socks[0], rep, text, std::max<int>(kReadyTimeoutMs, int(timeout_ms_))) &&
            rep.kind == ReplyKind::ready && text.size() == sizeof(Ready) &&
            reinterpret_cast<const Ready*>(text.data())->magic == Ready{}.magic;
  } catch (const std::exception& e) {
    failed = std::string(": ") + e.what();
  }
  if (!ready) {
    const pid_t pid = c->pid;
    c.reset();
    reap(pid);
    throw std::runtime_error("NF process " + name_ + " did not start" +
                             (failed.empty() ? " (its errors are above)" : failed));
  }
  return c;
}

void NfProcess::count_on_device(uint32_t index) {
  std::lock_guard<std::mutex> lk(m_);
  device_counted_.push_back(index);
}

void NfProcess::start(Backend backend) {
  std::lock_guard<std::mutex> lk(m_);
  if (started_) return;
  backend_ = backend;
#if GPUNFV_HAVE_CUDA
  if (backend == Backend::gpu) GPUNFV_CUDA(cudaGetDevice(&device_));
#endif
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
  std::exception_ptr calls_failed;
  bool ok = false, hung = false;
  try {
    ok = nf_process::send_all(fd, &r, sizeof r) &&
         (text.empty() || nf_process::send_all(fd, text.data(), text.size())) &&
         c->receive(fd, rep, answer, int(timeout_ms_), &hung);
  } catch (...) {  // the reply came, its GPU calls failed
    ok = true;
    calls_failed = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lk(m_);
    c->busy[k] = false;
    if (!ok && child_ == c) {
      if (hung) {
        // Its requests would wait for ever: it goes as a lost one does.
        std::fprintf(stderr, "gpunfv: NF process %s answered nothing for %u ms: killing it\n",
                     name_.c_str(), timeout_ms_);
        kill(c->pid, SIGKILL);
        ++hung_;
      }
      lose();
    }
  }
  free_.notify_one();
  if (!ok) return false;
  if (calls_failed) std::rethrow_exception(calls_failed);
  if (!rep.ok) throw std::runtime_error("NF process " + name_ + ": " + answer);
  if (reply) *reply = std::move(answer);
  return true;
}

void NfProcess::restart_loop() {
#if GPUNFV_HAVE_CUDA
  // A restarted process's GPU calls are performed here until it is ready: in the device's
  // primary context, as the first start's were.
  if (backend_ == Backend::gpu) cudaSetDevice(device_);
#endif
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
  return {{"pid", pid_}, {"restarts", restarts_}, {"hung", hung_}};
}

}  // namespace gpunfv
