// The collect workers: every node's collect() runs once per batch (an NF with shards once per
// shard, the shards' ranges covering the batch exactly), an unsharded NF sees batches in the
// order they were handed over, and a batch is released only when all of its collects are done.
#include "chain/collect_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace gpunfv {
namespace {

class RecordingNf final : public NetworkFunction {
 public:
  RecordingNf(std::string name, uint32_t shards) : NetworkFunction(std::move(name)), shards_(shards) {}
  std::string_view type() const override { return "recording"; }
  void prepare(Backend) override {}
  void process(const BatchView&, uint32_t, uint32_t, uint8_t) const override {}
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView&, uint8_t, const GpuStream&) const override {}
#endif
  std::string describe() const override { return "recording"; }
  uint32_t collect_shards() const override { return shards_; }
  bool collects() const override { return collects_; }
  bool collects_ = true;

  void collect(const BatchView& b, uint8_t pos, const CollectContext&) override {
    std::lock_guard<std::mutex> lk(m_);
    EXPECT_EQ(shards_, 1u) << "a sharded NF gets collect_range() only";
    order.push_back(b.seq[0]);
    add(b, pos, 0, b.count);
  }
  void collect_range(const BatchView& b, uint8_t pos, const CollectContext&, uint32_t begin,
                     uint32_t end, uint32_t shard) override {
    std::lock_guard<std::mutex> lk(m_);
    EXPECT_LT(shard, shards_);
    threads[shard].insert(std::this_thread::get_id());
    add(b, pos, begin, end);
  }

  std::mutex m_;
  std::vector<uint64_t> order;                           // first seq of each batch, unsharded
  std::map<uint64_t, std::vector<uint32_t>> seen;        // batch (first seq) -> times each packet was seen
  std::map<uint32_t, std::set<std::thread::id>> threads;  // shard -> threads that ran it

 private:
  void add(const BatchView& b, uint8_t pos, uint32_t begin, uint32_t end) {
    EXPECT_EQ(pos, position_of_this);
    std::vector<uint32_t>& s = seen[b.seq[0]];
    s.resize(b.count);
    for (uint32_t i = begin; i < end; ++i) ++s[i];
  }

 public:
  uint8_t position_of_this = 0;

 private:
  uint32_t shards_;
};

TEST(CollectWorkers, ShardsCoverEveryBatchOnceAndBatchesAreReleasedAfterAll) {
  RuntimeConfig rc;
  auto* whole = new RecordingNf("whole", 1);
  auto* split = new RecordingNf("split", 3);
  rc.nfs.emplace_back(whole);
  rc.nfs.emplace_back(split);
  whole->position_of_this = 0;
  split->position_of_this = 1;
  Chain c;
  c.set_path({0, 1});
  rc.chains.push_back(c);

  constexpr int kBatches = 40;
  std::vector<std::unique_ptr<Batch>> batches;
  std::atomic<int> released{0};
  std::mutex m;
  std::set<Batch*> released_set;
  {
    CollectWorkers workers(rc, [&](Batch* b) {
      std::lock_guard<std::mutex> lk(m);
      EXPECT_TRUE(released_set.insert(b).second) << "released twice";
      ++released;
    });
    uint64_t seq = 0;
    for (int k = 0; k < kBatches; ++k) {
      const uint32_t count = k % 5 == 0 ? 1 + k : 100 + k;  // some batches smaller than 3 x shards
      batches.push_back(std::make_unique<Batch>(256, 64, MemoryKind::host));
      Batch& b = *batches.back();
      b.set_count(count);
      for (uint32_t i = 0; i < count; ++i) b.view().seq[i] = seq++;
      if (k == kBatches - 1) {
        workers.collect_and_wait(&b, CollectContext{});  // waits; not released
        std::lock_guard<std::mutex> lk(split->m_);
        EXPECT_EQ(split->seen.count(b.view().seq[0]), 1u) << "collect_and_wait returned early";
      } else {
        workers.submit(&b, CollectContext{});
      }
    }
    workers.finish();
  }
  EXPECT_EQ(released.load(), kBatches - 1);
  ASSERT_EQ(whole->order.size(), size_t(kBatches));
  for (size_t k = 1; k < whole->order.size(); ++k) EXPECT_LT(whole->order[k - 1], whole->order[k]);
  for (RecordingNf* nf : {whole, split}) {
    ASSERT_EQ(nf->seen.size(), size_t(kBatches)) << nf->name();
    for (const auto& [first, times] : nf->seen)
      for (size_t i = 0; i < times.size(); ++i)
        ASSERT_EQ(times[i], 1u) << nf->name() << " batch " << first << " packet " << i;
  }
  EXPECT_EQ(split->threads.size(), 3u);
  for (const auto& [shard, ids] : split->threads) EXPECT_EQ(ids.size(), 1u) << "shard " << shard;
}

TEST(CollectWorkers, NfsThatDoNotCollectAreSkipped) {
  RuntimeConfig rc;
  auto* quiet = new RecordingNf("quiet", 1);
  auto* loud = new RecordingNf("loud", 1);
  quiet->collects_ = false;
  loud->position_of_this = 1;
  rc.nfs.emplace_back(quiet);
  rc.nfs.emplace_back(loud);
  Chain only_quiet, both;
  only_quiet.set_path({0});
  both.set_path({0, 1});
  rc.chains.push_back(only_quiet);
  rc.chains.push_back(both);
  Batch a(16, 64, MemoryKind::host), b(16, 64, MemoryKind::host);
  a.set_count(4);
  b.set_count(4);
  a.chain = 0;
  b.chain = 1;
  std::vector<Batch*> released;
  std::mutex m;
  {
    CollectWorkers workers(rc, [&](Batch* x) {
      std::lock_guard<std::mutex> lk(m);
      released.push_back(x);
    });
    // A chain where no NF collects: released on the caller's thread, before submit returns.
    workers.submit(&a, CollectContext{});
    {
      std::lock_guard<std::mutex> lk(m);
      ASSERT_EQ(released.size(), 1u);
      EXPECT_EQ(released[0], &a);
    }
    workers.collect_and_wait(&a, CollectContext{});  // nothing to wait for
    workers.collect_and_wait(&b, CollectContext{});  // waits for loud only
    workers.finish();
  }
  EXPECT_TRUE(quiet->seen.empty());
  EXPECT_EQ(loud->seen.size(), 1u);
  EXPECT_EQ(released.size(), 1u);
}

}  // namespace
}  // namespace gpunfv
