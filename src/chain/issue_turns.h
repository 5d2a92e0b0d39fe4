// Turns of a chain's fused batches at each of its nodes, for several threads issuing them
// (settings.gpu_issue_threads): batch `seq` issues node k only after batch seq - 1 issued it.
// Every NF then sees its calls (NetworkFunction::process_gpu) in ingress order, as with one
// issuing thread, which an NF with ordered state relies on (IPsec numbers a batch's packets
// after the previous batch's, in call order), while different nodes of different batches are
// issued at once: thread A issues node 2 of batch 7 while thread B issues node 1 of batch 8.
//
// Batches reach the issuing threads in batch_seq order (ChainFlow's stage 0 queue releases
// them so), and a thread takes a batch's nodes in path order, so a batch waiting for its turn
// waits only on batches taken before it: no cycle, no deadlock. Every batch must pass every
// node (pass() even where nothing is launched). Errors: none.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

namespace gpunfv {

class IssueTurns {
 public:
  // `nodes` turns, each at batch `first_seq`.
  explicit IssueTurns(size_t nodes, uint64_t first_seq = 0)
      : nodes_(nodes), next_(new std::atomic<uint64_t>[nodes == 0 ? 1 : nodes]) {
    for (size_t k = 0; k < nodes_; ++k) next_[k].store(first_seq, std::memory_order_relaxed);
  }

  // Returns once it is batch `seq`'s turn at node k. The wait is short: the batch before is
  // being issued by another thread, a few microseconds a call.
  void wait(size_t k, uint64_t seq) const {
    for (unsigned spins = 0; next_[k].load(std::memory_order_acquire) != seq; ++spins)
      if (spins > 64) std::this_thread::yield();
  }
  // Batch `seq` issued node k: the next batch's turn there.
  void pass(size_t k, uint64_t seq) { next_[k].store(seq + 1, std::memory_order_release); }

  size_t nodes() const { return nodes_; }

 private:
  size_t nodes_;
  std::unique_ptr<std::atomic<uint64_t>[]> next_;
};

}  // namespace gpunfv
