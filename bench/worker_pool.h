// A pool of worker threads started once and pinned one per CPU, reused by every timed run of a
// benchmark: a row then measures its work, not thread creation and joining (which, on many
// cores over a few milliseconds of work, costs as much as the work).
//
// Workers pin themselves to the CPUs this process may run on when the pool starts, in order
// (worker k on the k-th allowed CPU, wrapping when there are more workers than CPUs). Start the
// pool after DPDK's EAL is up: rte_eal_init pins its calling thread to one CPU, and threads
// started from a pinned thread inherit that (ensure_dpdk_eal puts the affinity back first).
//
// Between runs workers spin briefly on the next run's generation number, then sleep on it
// (std::atomic::wait), so back-to-back runs start within microseconds and an idle pool costs
// nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace gpunfv::bench {

class WorkerPool {
 public:
  // Starts `workers` threads (at least 1) and pins each to a CPU.
  explicit WorkerPool(unsigned workers);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const { return unsigned(threads_.size()); }
  // The CPU each worker is pinned to, e.g. "0,1,2,3" (-1 where pinning failed).
  std::string cpus() const;

  // Runs work(i, t) for i in [0, items) on workers 0..threads-1 (t: the worker's index), each
  // taking the next item; returns when all are done, with the seconds from the first of those
  // workers starting until the last one finished. `threads` is clamped to [1, size()]. Not reentrant: one
  // run at a time, from one thread.
  template <typename Work>
  double run(size_t items, unsigned threads, const Work& work) {
    return dispatch(items, threads, &work, [](const void* w, size_t i, unsigned t) {
      (*static_cast<const Work*>(w))(i, t);
    });
  }

  // Whether the calling thread is a pool worker (a run cannot start another run).
  static bool in_worker();
  // The process's pool, when one was started with start_shared() (else null).
  static WorkerPool* shared();
  // Starts the process's pool (once; later calls with another size replace it).
  static WorkerPool& start_shared(unsigned workers);

 private:
  using Call = void (*)(const void*, size_t, unsigned);
  double dispatch(size_t items, unsigned threads, const void* work, Call call);
  void loop(unsigned index);

  std::vector<std::thread> threads_;
  std::vector<int> cpu_of_;
  // The current run, written by dispatch() before the generation is bumped.
  const void* work_ = nullptr;
  Call call_ = nullptr;
  size_t items_ = 0;
  unsigned active_ = 0;
  alignas(64) std::atomic<size_t> next_{0};
  alignas(64) std::atomic<uint64_t> generation_{0};
  // Every worker takes part in every generation (the idle ones only acknowledge it), so none
  // can lag into the next run's fields; `working_` counts the ones doing this run's items.
  alignas(64) std::atomic<unsigned> pending_{0};
  alignas(64) std::atomic<unsigned> working_{0};
  alignas(64) std::atomic<uint64_t> first_start_{0};  // monotonic_ns of this run's first worker
  std::atomic<bool> stop_{false};
};

}  // namespace gpunfv::bench
