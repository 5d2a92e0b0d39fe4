// HangWatchdog: the last resort against a GPU ring run that hangs. A persistent kernel that
// never exits cannot be reclaimed by the process (cudaFree, cudaMemcpy on the legacy stream and
// the CUDA teardown at exit may wait for it for ever), and a CUDA call that blocks (a launch, a
// copy queued behind a hung kernel) cannot be interrupted. So the watchdog, a thread of its own,
// is armed with a phase name and a time limit around every blocking step of a RingSession;
// when a phase outlives its limit it prints the phase, the limit and what `report` says (which
// must only read host memory: mapped registers, flags, atomics), and ends the process with
// kExitCode. Tests and benchmarks then fail with a reason instead of hanging.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gpunfv::gpuring {

class HangWatchdog {
 public:
  static constexpr int kExitCode = 3;
  using Report = std::function<std::string()>;

  explicit HangWatchdog(Report report) : report_(std::move(report)), thread_([this] { run(); }) {}
  ~HangWatchdog() {
    {
      std::lock_guard<std::mutex> lk(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  HangWatchdog(const HangWatchdog&) = delete;
  HangWatchdog& operator=(const HangWatchdog&) = delete;

  // (Re)arms: `phase` must end (disarm() or the next arm()) within `seconds`.
  void arm(std::string phase, double seconds) {
    {
      std::lock_guard<std::mutex> lk(m_);
      phase_ = std::move(phase);
      limit_s_ = seconds;
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
      armed_ = true;
    }
    cv_.notify_all();
  }
  void disarm() {
    {
      std::lock_guard<std::mutex> lk(m_);
      armed_ = false;
    }
    cv_.notify_all();
  }
  // Gives up at once (the caller knows the kernels will not exit).
  [[noreturn]] void fire(const std::string& why) {
    std::string phase;
    {
      std::lock_guard<std::mutex> lk(m_);
      phase = phase_;
    }
    die(phase + ": " + why);
  }

 private:
  [[noreturn]] void die(const std::string& what) {
    std::string state;
    try {
      state = report_ ? report_() : std::string();
    } catch (...) {
      state = "(report failed)";
    }
    std::fprintf(stderr,
                 "\n[  FAILED  ] gpuring watchdog: %s\n  state: %s\n  exiting the process (exit code %d): "
                 "persistent kernels that do not exit cannot be reclaimed\n",
                 what.c_str(), state.c_str(), kExitCode);
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(kExitCode);
  }

  void run() {
    std::unique_lock<std::mutex> lk(m_);
    while (!quit_) {
      if (!armed_) {
        cv_.wait(lk);
        continue;
      }
      if (cv_.wait_until(lk, deadline_) == std::cv_status::timeout && armed_ && !quit_ &&
          std::chrono::steady_clock::now() >= deadline_) {
        const std::string what = phase_ + " did not complete within " + std::to_string(limit_s_) + " s";
        lk.unlock();
        die(what);
      }
    }
  }

  Report report_;
  std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false, quit_ = false;
  std::string phase_;
  double limit_s_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace gpunfv::gpuring
