#include "chain/collect_workers.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "core/thread_name.h"
#include "core/debug_switches.h"

namespace gpunfv {

CollectWorkers::CollectWorkers(const RuntimeConfig& rc, Release release)
    : rc_(rc), release_(std::move(release)) {
  // GPUNFV_DEBUG_SKIP_COLLECT=1 runs no NF's collect(): the NFs' counters stay at zero. Only to
  // measure what the host's collect work costs a chain's rate.
  skip_all_ = debug_switches().skip_collect;
  for (size_t nf = 0; nf < rc.nfs.size(); ++nf) {
    first_worker_.push_back(workers_.size());
    const uint32_t shards = std::max<uint32_t>(1, rc.nfs[nf]->collect_shards());
    for (uint32_t s = 0; s < shards; ++s)
      workers_.push_back(Worker{nf, s, shards, std::make_unique<BlockingQueue<Job>>()});
  }
  for (Worker& w : workers_) threads_.emplace_back([this, &w] { work(w); });
}

CollectWorkers::~CollectWorkers() { finish(); }

uint32_t CollectWorkers::jobs_of(const Chain& chain) const {
  uint32_t jobs = 0;
  for (uint16_t nf : chain.path)
    if (collects(nf)) jobs += workers_[first_worker_[nf]].shards;
  return jobs;
}

void CollectWorkers::submit(Batch* b, const CollectContext& ctx) {
  if (jobs_of(rc_.chains[b->chain]) == 0) {
    release_(b);
    return;
  }
  enqueue(b, ctx, nullptr);
}

void CollectWorkers::collect_and_wait(Batch* b, const CollectContext& ctx) {
  if (jobs_of(rc_.chains[b->chain]) == 0) return;
  std::promise<void> done;
  std::future<void> f = done.get_future();
  enqueue(b, ctx, &done);
  f.wait();
}

void CollectWorkers::enqueue(Batch* b, const CollectContext& ctx, std::promise<void>* waiter) {
  const Chain& chain = rc_.chains[b->chain];
  const uint32_t jobs = jobs_of(chain);
  {
    std::lock_guard<std::mutex> lk(m_);
    pending_[b] = Pending{jobs, waiter};
  }
  for (size_t pos = 0; pos < chain.path.size(); ++pos) {
    if (!collects(chain.path[pos])) continue;
    const size_t first = first_worker_[chain.path[pos]];
    for (uint32_t s = 0; s < workers_[first].shards; ++s)
      workers_[first + s].queue->push(Job{b, static_cast<uint8_t>(pos), ctx});
  }
}

void CollectWorkers::done_one(Batch* b) {
  std::promise<void>* waiter = nullptr;
  {
    std::lock_guard<std::mutex> lk(m_);
    auto it = pending_.find(b);
    if (--it->second.nodes != 0) return;
    waiter = it->second.waiter;
    pending_.erase(it);
  }
  if (waiter)
    waiter->set_value();
  else
    release_(b);
}

void CollectWorkers::work(Worker& w) {
  // gn-collect-NF, and gn-collect-NF.S for an NF's further shards.
  set_thread_name(w.shard ? fmt::format("gn-collect-{}.{}", w.nf, w.shard)
                          : fmt::format("gn-collect-{}", w.nf));
  NetworkFunction& nf = *rc_.nfs[w.nf];
  BlockingQueue<Job>& q = *w.queue;
  for (;;) {
    auto job = q.pop_for(std::chrono::milliseconds(10));
    if (!job) {
      if (q.closed_and_empty()) return;
      continue;
    }
    try {
      const BatchView b = job->batch->view();
      if (w.shards == 1) {
        nf.collect(b, job->position, job->ctx);
      } else {
        const uint32_t begin = uint32_t(uint64_t(b.count) * w.shard / w.shards);
        const uint32_t end = uint32_t(uint64_t(b.count) * (w.shard + 1) / w.shards);
        nf.collect_range(b, job->position, job->ctx, begin, end, w.shard);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpunfv: NF '%s' failed collecting results: %s\n", nf.name().c_str(),
                   e.what());
      std::_Exit(1);
    }
    done_one(job->batch);
  }
}

void CollectWorkers::finish() {
  for (Worker& w : workers_) w.queue->close();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace gpunfv
