#include "chain/ingress_share.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace gpunfv {
namespace {

constexpr uint64_t kWindow = IngressShare::kWindowNs;

// Each thread at its boundary, in order; returns the queues each polls afterwards.
std::vector<std::vector<uint16_t>> boundaries(IngressShare& s) {
  std::vector<std::vector<uint16_t>> out(s.threads());
  for (uint16_t t = 0; t < s.threads(); ++t) s.queues_of(t, out[t]);
  return out;
}

// Every queue is polled by exactly one thread.
void expect_each_queue_once(const std::vector<std::vector<uint16_t>>& by_thread, uint16_t queues) {
  std::vector<int> seen(queues, 0);
  for (const auto& qs : by_thread)
    for (uint16_t q : qs) ++seen[q];
  for (uint16_t q = 0; q < queues; ++q) EXPECT_EQ(seen[q], 1) << "queue " << q;
}

// `windows` windows in which every active thread reports `full` of 100 polls.
uint64_t windows_of(IngressShare& s, uint64_t now, int windows, uint64_t full) {
  for (int w = 0; w < windows; ++w) {
    for (uint16_t t = 0; t < s.active(); ++t) s.note_polls(t, 100, full, false);
    now += kWindow;
    s.adjust(now);
  }
  return now;
}

TEST(IngressShare, WithoutAdaptingEachThreadKeepsItsQueues) {
  IngressShare s(3, 8, false);
  auto q = boundaries(s);
  EXPECT_EQ(q[0], (std::vector<uint16_t>{0, 3, 6}));
  EXPECT_EQ(q[1], (std::vector<uint16_t>{1, 4, 7}));
  EXPECT_EQ(q[2], (std::vector<uint16_t>{2, 5}));
  windows_of(s, 1, 50, 0);  // idle: nothing changes
  EXPECT_EQ(s.active(), 3);
  EXPECT_EQ(boundaries(s), q);
}

TEST(IngressShare, IdleThreadsAreLetGoByHalvesAfterSettling) {
  IngressShare s(8, 8, true);
  EXPECT_EQ(s.active(), 8);
  uint64_t now = windows_of(s, 1, 1, 0);  // the first look starts the window
  now = windows_of(s, now, IngressShare::kSettle - 1, 0);
  EXPECT_EQ(s.active(), 8);
  now = windows_of(s, now, 1, 0);
  EXPECT_EQ(s.active(), 4);
  now = windows_of(s, now, IngressShare::kSettle, 0);
  EXPECT_EQ(s.active(), 2);
  now = windows_of(s, now, IngressShare::kSettle, 0);
  EXPECT_EQ(s.active(), 1);
  windows_of(s, now, 3 * IngressShare::kSettle, 0);
  EXPECT_EQ(s.active(), 1);  // one always polls
  EXPECT_EQ(s.shrunk(), 3u);
}

TEST(IngressShare, FullPollsKeepThreads) {
  IngressShare s(4, 8, true);
  windows_of(s, 1, 1 + 4 * IngressShare::kSettle, 10);  // 10% of polls full
  EXPECT_EQ(s.active(), 4);
}

// A load that needed a thread woken keeps it for kFloorWindows, then may try fewer again.
TEST(IngressShare, AWakeHoldsItsCountForAWhile) {
  IngressShare s(8, 8, true);
  uint64_t now = windows_of(s, 1, 1 + 3 * IngressShare::kSettle, 0);
  ASSERT_EQ(s.active(), 1);
  now = windows_of(s, now, 1, 90);
  ASSERT_EQ(s.active(), 2);
  now = windows_of(s, now, IngressShare::kFloorWindows - 2, 0);
  EXPECT_EQ(s.active(), 2);
  now = windows_of(s, now, IngressShare::kSettle, 0);
  EXPECT_EQ(s.active(), 1);
}

TEST(IngressShare, AThreadWhoseQueuesFillWakesAnotherAtOnce) {
  IngressShare s(4, 8, true);
  uint64_t now = windows_of(s, 1, 1 + IngressShare::kSettle, 0);
  now = windows_of(s, now, IngressShare::kSettle, 0);
  ASSERT_EQ(s.active(), 1);
  now = windows_of(s, now, 1, 60);  // 60% of its polls full
  EXPECT_EQ(s.active(), 2);
  now = windows_of(s, now, 1, 60);
  EXPECT_EQ(s.active(), 3);
  // Between the thresholds: kept.
  now = windows_of(s, now, 4 * IngressShare::kSettle, 20);
  EXPECT_EQ(s.active(), 3);
  // A queue that dropped frames wakes one too, whatever the polls say.
  s.note_polls(0, 100, 0, true);
  s.adjust(now + kWindow);
  EXPECT_EQ(s.active(), 4);
  EXPECT_EQ(s.grown(), 3u);
}

TEST(IngressShare, QueuesMoveOnlyAtTheirThreadsBoundary) {
  IngressShare s(4, 8, true);
  windows_of(s, 1, 1 + IngressShare::kSettle, 0);
  ASSERT_EQ(s.active(), 2);
  std::vector<uint16_t> q;
  // Thread 0 looks before threads 2 and 3 have given theirs away: it keeps its own only.
  s.queues_of(0, q);
  EXPECT_EQ(q, (std::vector<uint16_t>{0, 4}));
  s.queues_of(2, q);
  EXPECT_TRUE(q.empty());  // 2 and 6 given to thread 0
  s.queues_of(0, q);
  EXPECT_EQ(q, (std::vector<uint16_t>{0, 2, 4, 6}));
  // Thread 3 still holds 3 and 7 until its boundary; thread 1 then takes them.
  s.queues_of(1, q);
  EXPECT_EQ(q, (std::vector<uint16_t>{1, 5}));
  s.queues_of(3, q);
  EXPECT_TRUE(q.empty());
  s.queues_of(1, q);
  EXPECT_EQ(q, (std::vector<uint16_t>{1, 3, 5, 7}));
  expect_each_queue_once(boundaries(s), 8);
}

TEST(IngressShare, WokenThreadsTakeQueuesBackFromTheirHolders) {
  IngressShare s(4, 8, true);
  uint64_t now = windows_of(s, 1, 1 + IngressShare::kSettle, 0);
  now = windows_of(s, now, IngressShare::kSettle, 0);
  ASSERT_EQ(s.active(), 1);
  auto q = boundaries(s);
  boundaries(s);
  expect_each_queue_once(q = boundaries(s), 8);
  EXPECT_EQ(q[0].size(), 8u);
  windows_of(s, now, 1, 90);
  ASSERT_EQ(s.active(), 2);
  q = boundaries(s);  // thread 0 gives 1, 3, 5, 7 away; thread 1 takes them the next time
  q = boundaries(s);
  expect_each_queue_once(q, 8);
  EXPECT_EQ(q[0], (std::vector<uint16_t>{0, 2, 4, 6}));
  EXPECT_EQ(q[1], (std::vector<uint16_t>{1, 3, 5, 7}));
}

TEST(IngressShare, MoreThreadsThanQueues) {
  IngressShare s(4, 2, true);
  auto q = boundaries(s);
  expect_each_queue_once(q, 2);
  EXPECT_TRUE(q[2].empty());
  EXPECT_TRUE(q[3].empty());
}

}  // namespace
}  // namespace gpunfv
