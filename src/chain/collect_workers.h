// NFs' collect() off the egress thread. Egress accounts and transmits a batch, then hands it
// here: one worker thread per NF runs that NF's collect() for every node of every chain where
// it sits, in the order egress handed the batches over (so each NF sees a chain's batches in
// ingress order, on one thread, even when several chains share the NF). An NF whose collect()
// only counts may ask for shards (NetworkFunction::collect_shards, NIDS without an alert log):
// it then gets that many threads, each running collect_range() over its share of every batch.
// The batch is released when every node's collect() is done. At tens of Mpps the NFs'
// per-packet collect loops (rule hits, alerts, SA counters) were as much work as the egress
// loop itself.
//
// Errors: none of its own; an exception from an NF's collect() is reported on stderr and ends
// the process (its counters would otherwise be silently short).
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "chain/runtime_config.h"
#include "core/batch.h"
#include "core/blocking_queue.h"

namespace gpunfv {

class CollectWorkers {
 public:
  using Release = std::function<void(Batch*)>;
  CollectWorkers(const RuntimeConfig& rc, Release release);
  ~CollectWorkers();
  CollectWorkers(const CollectWorkers&) = delete;
  CollectWorkers& operator=(const CollectWorkers&) = delete;

  // Runs every node's collect() of b's chain (ctx as the NFs see it), then releases b.
  void submit(Batch* b, const CollectContext& ctx);
  // Runs every node's collect() of b's chain on the workers and waits for them; b is not
  // released (for batches that must go back in order, e.g. to a gpuring port's tx side).
  void collect_and_wait(Batch* b, const CollectContext& ctx);
  // Waits until every submitted batch was collected and released; stops the workers.
  void finish();

 private:
  struct Job {
    Batch* batch;
    uint8_t position;
    CollectContext ctx;
  };
  // One worker: an NF, and its shard of each batch (of shards; 1: the whole batch).
  struct Worker {
    size_t nf;
    uint32_t shard, shards;
    std::unique_ptr<BlockingQueue<Job>> queue;
  };
  void work(Worker& w);
  void done_one(Batch* b);
  uint32_t jobs_of(const Chain& chain) const;  // collect jobs a batch of `chain` makes
  bool collects(size_t nf) const { return !skip_all_ && rc_.nfs[nf]->collects(); }

  const RuntimeConfig& rc_;
  Release release_;
  bool skip_all_ = false;  // GPUNFV_DEBUG_SKIP_COLLECT
  std::vector<Worker> workers_;       // an NF's shards are adjacent
  std::vector<size_t> first_worker_;  // per NF: its first worker
  std::vector<std::thread> threads_;
  std::mutex m_;
  struct Pending {
    uint32_t nodes = 0;                   // nodes still collecting
    std::promise<void>* waiter = nullptr;  // collect_and_wait: signalled instead of released
  };
  void enqueue(Batch* b, const CollectContext& ctx, std::promise<void>* waiter);
  std::unordered_map<Batch*, Pending> pending_;
};

}  // namespace gpunfv
