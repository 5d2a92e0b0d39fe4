// The queues between a chain's stages and Simmer's flow control over them.
//
// Stages of a chain: 0 enters the chain (classify + first switch), k + 1 runs node k's NF.
// Every batch crosses every stage in order (a node no packet of the batch was sent to passes
// it on at no cost), so each stage queue releases batches in ingress order (batch_seq) and an
// NF never sees a flow's packets out of order, whichever worker or stream runs it.
//
// Congestion monitor (Simmer 3.3.1): when the packets waiting at stage s exceed qt batches,
// stage s - 1 is told slow-down; when they fall back below, fasten-up. Rate controller
// (3.3.2): a slowed stage takes no batch from its queue, so it launches no kernel and leaves
// the GPU to the bottleneck. A repeated signal changes nothing. When stage 0 is slowed the
// ingress port is paused (ingress_paused()).
//
// Bounded queues (queue_batches > 0) model NF RX rings of fixed size: a batch pushed into a
// full queue has the packets sent to that node dropped there (nf_queue_full), which is what
// happens inside a chain without backpressure.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/batch.h"

namespace gpunfv {

struct StageMetrics {
  uint64_t batches = 0;          // batches that crossed the stage
  uint64_t launches = 0;         // batches the NF actually ran on (packets sent to it > 0)
  uint64_t packets = 0;          // packets sent to the stage's NF
  uint64_t queue_full_drops = 0; // packets dropped because the queue was full
  uint64_t max_queued_packets = 0;
  double queued_packet_seconds = 0;  // integral of occupancy over time (mean = / elapsed)
  uint64_t slowed_ns = 0;        // time the rate controller held the stage off
  uint64_t slow_down_signals = 0;
  uint64_t busy_ns = 0;          // GPU: time the stage's stream spent on its batches
};

class ChainFlow {
 public:
  // `stages` = NF count + 1; threshold in packets (qt x batch size); 0 = no backpressure.
  ChainFlow(size_t stages, double threshold_packets, uint32_t queue_batches);

  // Queues batch b at stage s with `packets` of its packets sent there. Returns false when
  // the queue is full (bounded queues): the caller drops those packets and pushes again
  // with packets = 0.
  bool push(size_t s, Batch* b, uint32_t packets, uint64_t now_ns);
  // The next batch of stage s in ingress order, if it is queued and the stage is not slowed.
  Batch* pop(size_t s, uint64_t now_ns);
  // A batch that crossed stage s with the stages before it, never queued there (the GPU's fused
  // pipeline): counted as pushed and popped at once, in any order.
  void pass(size_t s, Batch* b, uint32_t packets, uint64_t now_ns);
  bool ingress_paused() const;
  bool stage_slowed(size_t s) const;
  void count_launch(size_t s);
  void add_busy(size_t s, uint64_t ns);
  size_t stages() const { return st_.size(); }
  uint64_t queued_packets(size_t s) const;
  // Some stage has a batch waiting, or every issuing thread is busy (set_issuers): the chain
  // takes batches no faster than they come, and a batch closed now would wait. Read without the
  // flow's lock (an ingress thread asks on every poll while its batch is due).
  bool backlogged() const;
  // The GPU's fused pipeline: `n` threads take stage 0's batches and issue each whole; a batch
  // counts from begin_issue() to end_issue(). While all n are issuing, the chain is backlogged,
  // so ingress goes on filling a due batch until one of them is free instead of queueing it
  // behind them: fewer batches, each paying its calls once. 0 (the default): not counted.
  void set_issuers(uint32_t n) { issuers_ = n; }
  void begin_issue() { issuing_.fetch_add(1, std::memory_order_relaxed); }
  void end_issue() { issuing_.fetch_sub(1, std::memory_order_relaxed); }
  uint64_t packets_seen(size_t s) const;   // for rate monitoring (scheduler)
  std::vector<StageMetrics> metrics(uint64_t now_ns) const;
  // One line per stage: next batch due, batches waiting, packets, slowed (diagnostics).
  std::string state() const;

 private:
  struct Stage {
    std::map<uint64_t, std::pair<Batch*, uint32_t>> waiting;  // batch_seq -> (batch, packets)
    uint64_t next_seq = 0;
    uint64_t queued_packets = 0;
    bool slowed = false;
    uint64_t slowed_since = 0;
    uint64_t last_change_ns = 0;
    StageMetrics m;
  };
  void account_occupancy(Stage& st, uint64_t now_ns);
  void monitor(size_t s, uint64_t now_ns);  // congestion monitor of stage s's queue

  mutable std::mutex m_;
  std::atomic<uint64_t> waiting_batches_{0};  // over every stage's `waiting`, changed under m_
  std::atomic<uint32_t> issuing_{0};
  uint32_t issuers_ = 0;
  std::vector<Stage> st_;
  double threshold_;
  uint32_t queue_batches_;
};

}  // namespace gpunfv
