#include "chain/collect_workers.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "core/thread_name.h"

namespace gpunfv {

CollectWorkers::CollectWorkers(const RuntimeConfig& rc, Release release)
    : rc_(rc), release_(std::move(release)) {
  for (size_t i = 0; i < rc.nfs.size(); ++i) queues_.push_back(std::make_unique<BlockingQueue<Job>>());
  for (size_t i = 0; i < rc.nfs.size(); ++i) threads_.emplace_back([this, i] { work(i); });
}

CollectWorkers::~CollectWorkers() { finish(); }

void CollectWorkers::submit(Batch* b, const CollectContext& ctx) {
  if (rc_.chains[b->chain].path.empty()) {
    release_(b);
    return;
  }
  enqueue(b, ctx, nullptr);
}

void CollectWorkers::collect_and_wait(Batch* b, const CollectContext& ctx) {
  if (rc_.chains[b->chain].path.empty()) return;
  std::promise<void> done;
  std::future<void> f = done.get_future();
  enqueue(b, ctx, &done);
  f.wait();
}

void CollectWorkers::enqueue(Batch* b, const CollectContext& ctx, std::promise<void>* waiter) {
  const Chain& chain = rc_.chains[b->chain];
  {
    std::lock_guard<std::mutex> lk(m_);
    pending_[b] = Pending{static_cast<uint32_t>(chain.path.size()), waiter};
  }
  for (size_t pos = 0; pos < chain.path.size(); ++pos)
    queues_[chain.path[pos]]->push(Job{b, static_cast<uint8_t>(pos), ctx});
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

void CollectWorkers::work(size_t nf) {
  set_thread_name(fmt::format("gn-collect-{}", nf));
  BlockingQueue<Job>& q = *queues_[nf];
  for (;;) {
    auto job = q.pop_for(std::chrono::milliseconds(10));
    if (!job) {
      if (q.closed_and_empty()) return;
      continue;
    }
    try {
      rc_.nfs[nf]->collect(job->batch->view(), job->position, job->ctx);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpunfv: NF '%s' failed collecting results: %s\n", rc_.nfs[nf]->name().c_str(),
                   e.what());
      std::_Exit(1);
    }
    done_one(job->batch);
  }
}

void CollectWorkers::finish() {
  for (auto& q : queues_) q->close();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace gpunfv
