// Egress: the end of every chain. Batches that finished their chain arrive in any order; egress
// accounts every packet (transmitted, or dropped with its reason, per port and per NF), sends
// each port its packets, records rx-to-tx latency, and hands each batch on (collect workers, a
// gpuring port's ring) in ingress order per chain.
//
// Threads: chains that share an NF form a group; groups go round robin to at most
// settings.egress_threads sets, and each set runs egress_threads_per_chain threads that share
// its queue of finished batches. Any thread of a set takes the next batch and prepares it: the
// per-node counts, drops by reason per NF and per port, the per-port index lists, bytes and
// latency runs (work that does not depend on order). What must follow ingress order, the
// ports' tx calls and the hand-off, goes through a per-chain turn: the prepared batch is parked
// under its batch_seq, and whichever thread finds the chain's turn free transmits every parked
// batch that is next, in order. So each port sees a chain's packets in the order one thread
// gave, the hand-off keeps batch order (NIDS's alert log, a ring's batches), and no thread waits
// for another. A gpuring port's batch (packets in ring slots) is sent frame by frame, all of it
// at its turn. With several threads, a port whose tx is not thread-safe is locked for the run
// of a batch's frames to it (a thread that must wait first lets go of the locks it holds).
//
// Counters: per-port drops by reason and per-NF counts are kept per thread and added into the
// RunStats by finish(); the atomic totals (tx, forwarded, dropped) are live for the progress line.
// The per-thread counters are written with relaxed single-writer stores (core/counters.h),
// so live() can add them up while the threads run (the metrics endpoint, the time series).
//
// Errors: a batch whose metadata arrays are shorter than its count is a std::logic_error on an
// egress thread (the process ends: its counters could no longer add up). If a chain's batch
// never arrives, finish() says so on stderr and the ones after it stay unsent (the run's
// accounting check then reports the missing packets).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "chain/batch_shape.h"
#include "chain/runtime_config.h"
#include "core/batch.h"
#include "chain/run_stats.h"

namespace gpunfv {

class GpuRingFeed;

class Egress {
 public:
  struct Hooks {
    // Called once per batch after its packets were sent, in batch_seq order per chain (on any
    // egress thread, never two of one chain at once); egress does not touch the batch after.
    std::function<void(Batch*)> hand_off;
    // Per chain: the gpuring port feeding it, or null (a host batch).
    std::vector<GpuRingFeed*> feeds;
  };
  Egress(const RuntimeConfig& rc, RunStats& stats, const BatchShape& shape, Hooks hooks);
  ~Egress();
  Egress(const Egress&) = delete;
  Egress& operator=(const Egress&) = delete;

  // settings.egress_threads_per_chain, or its default where 0: 2 on a host with 8 cores or
  // more (an S_d chain's egress filled a core at 108 Mpps), else 1.
  static uint32_t threads_per_chain(const Settings& s);

  void start();
  // A batch that finished its chain (its `chain` and `batch_seq` set); any thread.
  void push(Batch* b);
  // After the last push: transmits and hands off what is left, stops the threads and adds
  // their counters and latency into the RunStats.
  void finish();
  size_t threads() const;

  // What the egress threads have counted so far, added up across them while they run.
  struct Live {
    std::vector<DropCounts> port_drops;            // per port, by reason
    std::vector<NfCounters> nfs;                   // per NF: in, out, drops (no names)
    std::vector<LatencyHistogram> chain_latency;   // per chain, rx to tx
  };
  Live live() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpunfv
