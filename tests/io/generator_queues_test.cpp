// The generator's rx queues: flows split by RSS, the same frames as one queue, per-flow order,
// and queues drained from their own threads at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "core/error.h"
#include "io/generator_port.h"
#include "port_test_util.h"

namespace gpunfv {
namespace {

using test::append_batch;
using test::drain;
using test::Received;
using test::yaml_node;

GeneratorPort make_generator(const std::string& keys) {
  return GeneratorPort(yaml_node("name: gen\ntype: generator\n" + keys), 3, {});
}

// Reads queue q until it is done.
Received drain_queue(GeneratorPort& gen, uint16_t q, uint32_t capacity = 61) {
  Batch b(capacity, 2048, MemoryKind::host);
  Received out;
  for (uint64_t calls = 0; calls < 10'000'000; ++calls) {
    b.set_count(0);
    uint32_t n = gen.rx_queue_burst(q, b, capacity);
    append_batch(b, 0, out);
    if (n == 0 && gen.rx_queue_done(q)) return out;
  }
  ADD_FAILURE() << "queue " << q << " never finished";
  return out;
}

// A flow's identity in a frame: addresses and ports (bytes 26..37).
std::vector<uint8_t> flow_key(const std::vector<uint8_t>& f) { return {f.begin() + 26, f.begin() + 38}; }

// Each flow's frames, in arrival order.
std::map<std::vector<uint8_t>, std::vector<std::vector<uint8_t>>> by_flow(const Received& r) {
  std::map<std::vector<uint8_t>, std::vector<std::vector<uint8_t>>> out;
  for (const auto& f : r.bytes) out[flow_key(f)].push_back(f);
  return out;
}

constexpr const char* kKeys = "count: 10007\nflows: 97\nsize: 60-1518\nseed: 9\n";

TEST(GeneratorQueues, UnionOfQueuesIsOneQueuesFramesWithFlowOrderKept) {
  auto one = make_generator(kKeys);
  Received all = drain(one);
  ASSERT_EQ(all.size(), 10007u);

  auto four = make_generator(std::string(kKeys) + "queues: 4\n");
  ASSERT_EQ(four.rx_queues(), 4);
  Received merged;
  std::set<std::vector<uint8_t>> seen_flows;
  for (uint16_t q = 0; q < 4; ++q) {
    Received part = drain_queue(four, q);
    EXPECT_GT(part.size(), 0u) << "queue " << q << " got no flow (97 flows over 4 queues)";
    // A flow lives in one queue only.
    std::set<std::vector<uint8_t>> mine;
    for (const auto& f : part.bytes) mine.insert(flow_key(f));
    for (const auto& k : mine) EXPECT_TRUE(seen_flows.insert(k).second);
    EXPECT_EQ(mine.size(), four.queue_flows(q).size());
    for (size_t i = 0; i < part.size(); ++i) {
      merged.bytes.push_back(part.bytes[i]);
      merged.len.push_back(part.len[i]);
    }
  }
  EXPECT_TRUE(four.rx_done());
  EXPECT_EQ(four.generated(), 10007u);
  // Per flow: the same frames in the same order (which also makes the multisets equal).
  EXPECT_EQ(by_flow(merged), by_flow(all));
  auto sorted = [](std::vector<std::vector<uint8_t>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(merged.bytes), sorted(all.bytes));
}

TEST(GeneratorQueues, QueueLessRxTakesEveryQueue) {
  auto four = make_generator(std::string(kKeys) + "queues: 4\n");
  Received got = drain(four);
  auto one = make_generator(kKeys);
  EXPECT_EQ(by_flow(got), by_flow(drain(one)));
}

TEST(GeneratorQueues, QueuesRunOnTheirOwnThreads) {
  auto gen = make_generator("count: 200000\nflows: 1024\nsize: 64\nqueues: 3\n");
  std::vector<Received> parts(3);
  std::vector<std::thread> threads;
  for (uint16_t q = 0; q < 3; ++q) threads.emplace_back([&, q] { parts[q] = drain_queue(gen, q, 256); });
  for (auto& t : threads) t.join();
  size_t total = 0;
  for (const auto& p : parts) total += p.size();
  EXPECT_EQ(total, 200000u);
  EXPECT_EQ(gen.generated(), 200000u);
}


TEST(GeneratorQueues, PacedQueuesShareTheRate) {
  // 200 kpps over two queues for 0.2 s: about 40k frames in all, never more than the rate allows.
  auto gen = make_generator("duration: 0.2\nrate: 200kpps\nflows: 64\nqueues: 2\n");
  std::vector<Received> parts(2);
  std::vector<std::thread> threads;
  for (uint16_t q = 0; q < 2; ++q) threads.emplace_back([&, q] { parts[q] = drain_queue(gen, q, 64); });
  for (auto& t : threads) t.join();
  const size_t total = parts[0].size() + parts[1].size();
  // Upper bound: the rate over the duration plus each queue's bucket (1 ms of its share). A
  // loaded machine polls late and gets fewer, so only the bound and the sharing are checked.
  EXPECT_LE(total, 40000u + 200u + 128u);
  EXPECT_GT(parts[0].size(), 0u);
  EXPECT_GT(parts[1].size(), 0u);
}

TEST(GeneratorQueues, MoreQueuesThanFlowsLeavesSomeEmptyAndDone) {
  auto gen = make_generator("count: 100\nflows: 2\nqueues: 8\n");
  size_t total = 0, empty = 0;
  for (uint16_t q = 0; q < 8; ++q) {
    Received r = drain_queue(gen, q);
    total += r.size();
    if (gen.queue_flows(q).empty()) {
      ++empty;
      EXPECT_EQ(r.size(), 0u);
      EXPECT_TRUE(gen.rx_queue_done(q));
    }
  }
  EXPECT_EQ(total, 100u);
  EXPECT_GE(empty, 6u);
}

TEST(GeneratorQueues, BadQueueCountIsAConfigError) {
  EXPECT_THROW(make_generator("count: 1\nqueues: 0\n"), ConfigError);
  EXPECT_THROW(make_generator("count: 1\nqueues: 129\n"), ConfigError);
}

}  // namespace
}  // namespace gpunfv
