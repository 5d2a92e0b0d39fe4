// Turns of a chain's batches at its nodes (chain/issue_turns.h): threads that take batches in
// order and issue their nodes at their turn call each node in batch order, whatever thread
// issues which batch and however the threads interleave.
#include "chain/issue_turns.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace gpunfv {
namespace {

TEST(IssueTurns, EveryNodeSeesTheBatchesInOrder) {
  constexpr size_t kNodes = 4, kThreads = 3;
  constexpr uint64_t kBatches = 3000;
  IssueTurns turns(kNodes);
  std::mutex m;
  std::vector<std::vector<uint64_t>> seen(kNodes);
  std::atomic<uint64_t> next{0};
  std::mutex take_m;  // batches are handed out in order, as ChainFlow's stage 0 queue does
  std::vector<std::thread> threads;
  std::vector<uint64_t> issued(kThreads, 0);
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (;;) {
        uint64_t seq;
        {
          std::lock_guard<std::mutex> lk(take_m);
          seq = next.load();
          if (seq == kBatches) return;
          next.store(seq + 1);
        }
        ++issued[t];
        for (size_t k = 0; k < kNodes; ++k) {
          turns.wait(k, seq);
          {
            std::lock_guard<std::mutex> lk(m);
            seen[k].push_back(seq);
          }
          if ((seq + k) % 7 == 0) std::this_thread::yield();  // interleave the threads
          turns.pass(k, seq);
        }
      }
    });
  for (auto& th : threads) th.join();
  for (size_t k = 0; k < kNodes; ++k) {
    ASSERT_EQ(seen[k].size(), kBatches) << "node " << k;
    for (uint64_t i = 0; i < kBatches; ++i) ASSERT_EQ(seen[k][i], i) << "node " << k;
  }
  uint64_t total = 0;
  for (uint64_t n : issued) total += n;
  EXPECT_EQ(total, kBatches);
}

TEST(IssueTurns, StartsAtTheFirstBatchGiven) {
  IssueTurns turns(2, 40);
  turns.wait(0, 40);  // returns at once
  turns.pass(0, 40);
  turns.wait(0, 41);
  turns.wait(1, 40);
  EXPECT_EQ(turns.nodes(), 2u);
}

}  // namespace
}  // namespace gpunfv
