#include "gpu/persistent_kernel_guard.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

namespace gpunfv {

namespace {

std::atomic<int> g_running{0};
std::atomic<uint64_t> g_streams{0};

struct Late {
  std::mutex m;
  uint64_t calls = 0;
  std::string first;
  std::set<std::string> warned;
};

Late& late() {
  static Late l;
  return l;
}

}  // namespace

PersistentKernelScope::PersistentKernelScope() { g_running.fetch_add(1); }

void PersistentKernelScope::release() {
  if (!held_) return;
  held_ = false;
  g_running.fetch_sub(1);
}

bool persistent_kernel_running() { return g_running.load() > 0; }

void note_cuda_setup(const char* what) {
  if (!persistent_kernel_running()) return;
  Late& l = late();
  std::lock_guard<std::mutex> lk(l.m);
  if (l.calls++ == 0) l.first = what;
  if (l.warned.insert(what).second)
    std::fprintf(stderr,
                 "gpunfv: warning: %s while a persistent ring kernel runs; CUDA may make it wait for "
                 "that kernel, which never ends (make it before the ring kernel starts)\n",
                 what);
}

LateCudaSetup late_cuda_setup() {
  Late& l = late();
  std::lock_guard<std::mutex> lk(l.m);
  return {l.calls, l.first};
}

void note_stream_created() { g_streams.fetch_add(1); }
void note_stream_destroyed() { g_streams.fetch_sub(1); }
uint64_t live_streams() { return g_streams.load(); }

int cuda_hardware_queues() {
  const char* e = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (!e || !*e) return 8;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  return (end && *end == 0 && v >= 1 && v <= 32) ? int(v) : 8;
}

}  // namespace gpunfv
