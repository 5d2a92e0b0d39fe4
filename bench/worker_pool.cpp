#include "worker_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <memory>

#include "core/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GPUNFV_PAUSE() _mm_pause()
#else
#define GPUNFV_PAUSE() std::this_thread::yield()
#endif

namespace gpunfv::bench {

namespace {

// Spins before sleeping: about 50-100 us, longer than the gap between back-to-back timed runs
// and far shorter than anything a benchmark measures.
constexpr int kSpins = 20000;

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

thread_local bool t_in_worker = false;

std::unique_ptr<WorkerPool>& shared_pool() {
  static std::unique_ptr<WorkerPool> pool;
  return pool;
}

}  // namespace

WorkerPool::WorkerPool(unsigned workers) {
  const std::vector<int> cpus = allowed_cpus();
  workers = std::max(1u, workers);
  cpu_of_.assign(workers, -1);
  for (unsigned k = 0; k < workers; ++k) {
    threads_.emplace_back([this, k] { loop(k); });
    if (!cpus.empty()) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[k % cpus.size()], &one);
      if (pthread_setaffinity_np(threads_.back().native_handle(), sizeof one, &one) == 0)
        cpu_of_[k] = cpus[k % cpus.size()];
    }
  }
}

WorkerPool::~WorkerPool() {
  stop_.store(true);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

std::string WorkerPool::cpus() const {
  std::string s;
  for (int c : cpu_of_) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

namespace {

// Waits until `counter` is 0: spins first, then sleeps on it.
void wait_zero(std::atomic<unsigned>& counter) {
  for (int spin = 0;; ++spin) {
    const unsigned p = counter.load(std::memory_order_acquire);
    if (p == 0) return;
    if (spin < kSpins)
      GPUNFV_PAUSE();
    else
      counter.wait(p, std::memory_order_acquire);
  }
}

}  // namespace

double WorkerPool::dispatch(size_t items, unsigned threads, const void* work, Call call) {
  threads = std::min(std::max(1u, threads), size());
  work_ = work, call_ = call, items_ = items, active_ = threads;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(size(), std::memory_order_relaxed);
  working_.store(threads, std::memory_order_relaxed);
  first_start_.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  wait_zero(working_);
  const uint64_t t1 = monotonic_ns();
  wait_zero(pending_);
  // From the first worker's start: waking a sleeping pool is not the work's time.
  return (t1 - first_start_.load(std::memory_order_acquire)) / 1e9;
}

bool WorkerPool::in_worker() { return t_in_worker; }

void WorkerPool::loop(unsigned index) {
  t_in_worker = true;
  uint64_t seen = 0;
  for (;;) {
    uint64_t g;
    for (int spin = 0; (g = generation_.load(std::memory_order_acquire)) == seen; ++spin) {
      if (spin < kSpins)
        GPUNFV_PAUSE();
      else
        generation_.wait(seen, std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    if (index < active_) {
      uint64_t none = 0;
      first_start_.compare_exchange_strong(none, monotonic_ns(), std::memory_order_acq_rel);
      for (size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < items_;)
        call_(work_, i, index);
      if (working_.fetch_sub(1, std::memory_order_acq_rel) == 1) working_.notify_one();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

WorkerPool* WorkerPool::shared() { return shared_pool().get(); }

WorkerPool& WorkerPool::start_shared(unsigned workers) {
  auto& p = shared_pool();
  if (!p || p->size() != std::max(1u, workers)) {
    p.reset();
    p = std::make_unique<WorkerPool>(workers);
  }
  return *p;
}

}  // namespace gpunfv::bench
