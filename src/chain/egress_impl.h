// Egress's internals (chain/egress.h), shared by egress.cpp (the threads, their sets, the
// chains' turns and the totals) and egress_send.cpp (preparing, sending and counting a batch).
// Private to the chain/ sources.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "chain/egress.h"
#include "core/blocking_queue.h"

namespace gpunfv {

struct Egress::Impl {
  // Packets received together (one rx burst) share an rx time, so latency is recorded per run.
  struct LatencyRun {
    uint64_t rx_ns;
    uint64_t length;
  };

  struct NfTotals {
    uint64_t in = 0, out = 0, in_bytes = 0, out_bytes = 0;
    DropCounts drops;
  };
  // One batch between its preparation and its turn: what the tx calls need, so any thread can
  // send it.
  struct Prepared {
    Batch* batch = nullptr;
    uint16_t chain = 0;
    uint64_t seq = 0;
    // Per port: this batch's packets for it, in order (lists[p][0, list_len[p])), sized to a
    // whole batch once so the per-packet loop only stores and counts.
    std::vector<std::vector<uint32_t>> lists;
    std::vector<uint32_t*> list_data;
    std::vector<uint32_t> list_len;
    std::vector<uint64_t> list_bytes;  // per port: bytes of its list
    std::vector<uint16_t> list_ports;  // ports with a non-empty list, in order of first use
    std::vector<LatencyRun> runs;      // of every list (right when every frame is sent)
    std::vector<uint8_t> ok;           // tx_list's answers, list after list
  };
  struct Set;
  // One egress thread and what it counted (added into the RunStats by finish()).
  struct Worker {
    Set* set = nullptr;
    size_t index = 0;
    std::vector<bool> used, held;  // per port: tx'd in this batch; lock held
    std::vector<uint16_t> held_ports;
    std::vector<uint32_t> sent;             // per port, this batch
    std::vector<uint64_t> sent_bytes;       // per port, this batch (frame by frame)
    std::vector<DropCounts> node_drops;     // per chain node, this batch
    std::vector<uint64_t> node_drop_bytes;  // per chain node, this batch: bytes of node_drops
    std::vector<DropCounts> port_drops;     // per port, the whole run
    std::vector<NfTotals> nfs;              // per NF, the whole run
    std::vector<LatencyHistogram> latency;  // per chain, rx to tx
    uint64_t cpu_ns = 0, turn_cpu_ns = 0;  // the thread's CPU time; of it, sending in turns
    std::thread thread;
  };
  struct Set {
    BlockingQueue<Batch*> finished;  // batches of this set's chains, any order
  };
  // A chain's turn: the next batch_seq to send, prepared batches waiting for theirs, and
  // whether a thread is sending (it then sends every parked batch that becomes next).
  struct ChainTurn {
    std::mutex m;
    uint64_t next = 0;
    std::map<uint64_t, Prepared*> parked;
    bool busy = false;
  };

  const RuntimeConfig& rc;
  RunStats& stats;
  BatchShape shape;
  Hooks hooks;
  std::vector<std::unique_ptr<Set>> sets;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<size_t> set_of_chain;
  std::vector<std::unique_ptr<ChainTurn>> turns;
  std::vector<std::unique_ptr<std::mutex>> tx_locks;  // per port; null: no lock needed
  std::vector<bool> is_ring_port;
  std::mutex spare_m;
  std::vector<std::unique_ptr<Prepared>> prepared;  // every one made; recycled through spare
  std::vector<Prepared*> spare;
  bool finished = false;

  // egress.cpp: threads, sets and turns.
  Impl(const RuntimeConfig& rc_, RunStats& stats_, const BatchShape& shape_, Hooks hooks_);
  void plan();
  Prepared* take_prepared();
  void give_prepared(Prepared* p);
  void work(Worker& w);
  void take_turn(Worker& w, Prepared* p);
  void finish();

  // egress_send.cpp: a batch prepared, sent and counted.
  static void check_arrays(const BatchView& v);
  void add_node_counts(Worker& w, const Chain& chain, const BatchView& v);
  // A packet of `nf` was dropped as nf_isolation_fault: the NF is quarantined (once).
  void quarantine(NetworkFunction& nf);
  void prepare(Worker& w, Prepared& p, Batch& batch);
  void hold_tx(Worker& w, uint16_t p);
  void release_tx(Worker& w);
  void transmit_lists(Worker& w, Prepared& p);
  uint64_t account_refused(Worker& w, size_t chain_index, const BatchView& v, const uint32_t* list,
                           uint32_t n, const uint8_t* ok, uint64_t now, uint64_t& dropped);
  void transmit_frames(Worker& w, Batch& batch);
  bool ring_port_tx(GpuRingFeed& feed, Batch& batch, uint16_t eg, const BatchView& v, uint32_t i);
};

}  // namespace gpunfv
