#include "cli/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpunfv {

namespace {

// A signal handler may only touch lock-free atomics and call async-signal-safe functions.
std::atomic<bool> stop_requested{false};
std::atomic<bool> lingering{false};
std::atomic<bool> reload_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_reload_signal(int) { reload_requested.store(true); }

void on_stop_signal(int sig) {
  if (stop_requested.exchange(true)) _exit(128 + sig);
  const int saved_errno = errno;  // the interrupted code may be about to read it
  static const char msg[] = "\ngpunfv: stopping, draining what is in flight (signal again to quit now)\n";
  static const char linger_msg[] = "\ngpunfv: no longer serving the final metrics\n";
  const bool l = lingering.load();
  const ssize_t written = write(STDERR_FILENO, l ? linger_msg : msg, (l ? sizeof linger_msg : sizeof msg) - 1);
  (void)written;  // nothing to do if stderr is gone
  errno = saved_errno;
}

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a blocking call the signal lands in resumes instead of failing
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return stop_requested;
}

void rearm_stop_signals_for_linger() {
  lingering = true;
  stop_requested = false;
}

void request_stop() { stop_requested.store(true); }

void install_reload_signal() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_reload_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGHUP, &sa, nullptr);
}

bool take_reload_request() { return reload_requested.exchange(false); }

}  // namespace gpunfv
