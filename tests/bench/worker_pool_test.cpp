// The benchmarks' worker pool: every item of a run is done exactly once, by workers below the
// run's thread count, run after run; workers are pinned to the CPUs the process may use; and
// run_batches uses the shared pool once it is started.
#include "worker_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "bench_util.h"

namespace gpunfv::bench {
namespace {

TEST(WorkerPool, EveryItemOnceOnTheRunsThreads) {
  WorkerPool pool(4);
  ASSERT_EQ(pool.size(), 4u);
  for (unsigned threads : {1u, 2u, 4u, 9u}) {
    for (int run = 0; run < 50; ++run) {
      const size_t items = 1 + run * 7;
      std::vector<std::atomic<int>> done(items);
      std::vector<std::atomic<unsigned>> by(items);
      const double s = pool.run(items, threads, [&](size_t i, unsigned t) {
        done[i].fetch_add(1);
        by[i].store(t);
      });
      EXPECT_GE(s, 0.0);
      for (size_t i = 0; i < items; ++i) {
        ASSERT_EQ(done[i].load(), 1) << "item " << i << ", threads " << threads;
        ASSERT_LT(by[i].load(), std::min(threads, pool.size()));
      }
    }
  }
}

TEST(WorkerPool, ZeroItemsReturnsAtOnce) {
  WorkerPool pool(2);
  int calls = 0;
  pool.run(0, 2, [&](size_t, unsigned) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(WorkerPool, WorkersArePinnedToAllowedCpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  WorkerPool pool(3);
  std::vector<int> cpu(3, -2);
  pool.run(3, 3, [&](size_t, unsigned t) {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    cpu[t] = CPU_COUNT(&mine) == 1 ? sched_getcpu() : -1;
  });
  std::istringstream listed(pool.cpus());
  std::string c;
  for (unsigned t = 0; t < 3 && std::getline(listed, c, ','); ++t) {
    const int want = std::stoi(c);
    ASSERT_GE(want, 0) << "worker " << t << " not pinned";
    EXPECT_TRUE(CPU_ISSET(want, &allowed));
    // A worker that ran an item did so on its CPU (one item each is not guaranteed: any worker
    // may take several).
    if (cpu[t] != -2) {
      EXPECT_EQ(cpu[t], want) << "worker " << t;
    }
  }
}

TEST(WorkerPool, RunBatchesUsesTheSharedPool) {
  WorkerPool& pool = WorkerPool::start_shared(2);
  ASSERT_EQ(WorkerPool::shared(), &pool);
  std::set<std::thread::id> ids;
  std::mutex m;
  for (int k = 0; k < 3; ++k)
    run_batches(64, 2, [&](size_t) {
      std::lock_guard<std::mutex> lk(m);
      ids.insert(std::this_thread::get_id());
      EXPECT_TRUE(WorkerPool::in_worker());
    });
  EXPECT_LE(ids.size(), 2u);  // the same workers every run, no new threads
  EXPECT_FALSE(WorkerPool::in_worker());
}

}  // namespace
}  // namespace gpunfv::bench
