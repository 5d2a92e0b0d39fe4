// Egress, one batch (chain/egress.h): a host batch prepared on any thread and sent by lists at
// its turn; a gpuring batch sent frame by frame at its turn; the port locks; the counting.
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "chain/egress_impl.h"
#include "chain/gpuring_feed.h"
#include "core/clock.h"
#include "io/gpuring/loops/ring_batches.h"

namespace gpunfv {

void Egress::Impl::check_arrays(const BatchView& v) {
  if (v.verdict.size() < v.count || v.visited.size() < v.count || v.next_nf.size() < v.count ||
      v.out_port.size() < v.count || v.len.size() < v.count || v.rx_ns.size() < v.count)
    throw std::logic_error("egress: a batch's arrays are shorter than its count");
}

// Packets each node saw, into the thread's NF totals with this batch's node drops (which the
// caller counted into w.node_drops[0, nodes) and which are cleared here). One pass per node
// over the visited bits, which the compiler vectorises: counting inside the packet loop
// bumped the same few counters packet after packet, about 3 ns a packet at 4 NFs.
void Egress::Impl::add_node_counts(Worker& w, const Chain& chain, const BatchView& v) {
  const uint32_t* visited = v.visited.framework_data();
  const uint16_t* len = v.len.framework_data();
  for (size_t k = 0; k < chain.path.size(); ++k) {
    uint32_t saw = 0;
    uint64_t saw_bytes = 0;
    for (uint32_t i = 0; i < v.count; ++i) {
      const uint32_t bit = (visited[i] >> k) & 1u;
      saw += bit;
      saw_bytes += bit * len[i];
    }
    NfTotals& nt = w.nfs[chain.path[k]];
    DropCounts& d = w.node_drops[k];
    // Relaxed stores: Egress::live() reads these while this thread counts.
    add_relaxed(nt.in, saw);
    add_relaxed(nt.out, saw - d.total());
    add_relaxed(nt.in_bytes, saw_bytes);
    add_relaxed(nt.out_bytes, saw_bytes - w.node_drop_bytes[k]);
    w.node_drop_bytes[k] = 0;
    for (int r = 0; r < kMaxDropReasons; ++r)
      if (d.by_reason[r]) add_relaxed(nt.drops.by_reason[r], d.by_reason[r]);
    if (d.by_reason[static_cast<int>(DropReason::nf_isolation_fault)])
      quarantine(*rc.nfs[chain.path[k]]);
    d = DropCounts{};
  }
}

void Egress::Impl::quarantine(NetworkFunction& nf) {
  if (nf.quarantined()) return;
  nf.quarantine();
  std::fprintf(stderr,
               "gpunfv: NF %s reached outside its memory: quarantined, its packets are dropped "
               "as nf_isolation_fault\n",
               nf.name().c_str());
}

// The order-independent part of a host batch: drops counted, the rest sorted into per-port
// lists, each list's bytes and latency runs summed as if every frame will be sent.
void Egress::Impl::prepare(Worker& w, Prepared& p, Batch& batch) {
  p.batch = &batch;
  p.chain = batch.chain;
  p.seq = batch.batch_seq;
  if (batch.is_external()) return;  // sent frame by frame at its turn
  const Chain& chain = rc.chains[batch.chain];
  const BatchView v = batch.view();
  check_arrays(v);
  // This loop runs for every packet: the arrays are read through plain pointers, their
  // bounds checked once above.
  const uint8_t* verdict = v.verdict.framework_data();
  const uint8_t* next_nf = v.next_nf.framework_data();
  const uint16_t* out_port = v.out_port.framework_data();
  const size_t nodes = chain.path.size();
  const size_t nports = rc.ports.size();
  uint32_t* list_len = p.list_len.data();
  uint32_t* const* lists = p.list_data.data();
  const uint16_t* frame_len = v.len.framework_data();
  uint64_t* node_drop_bytes = w.node_drop_bytes.data();
  DropCounts& in_drops = w.port_drops[chain.from];
  uint64_t dropped = 0;
  for (uint32_t i = 0; i < v.count; ++i) {
    auto reason = static_cast<DropReason>(verdict[i]);
    // A drop with next_nf at a node is that NF's; kChainDone marks classify's drops.
    if (reason != DropReason::none && next_nf[i] < nodes) {
      w.node_drops[next_nf[i]].add(reason);
      node_drop_bytes[next_nf[i]] += frame_len[i];
    }
    if (reason == DropReason::none) {
      const uint16_t eg = out_port[i] != kNoPort ? out_port[i] : chain.to;
      if (eg != kNoPort && eg < nports) {
        uint32_t& len = list_len[eg];
        if (len == 0) p.list_ports.push_back(eg);
        lists[eg][len++] = i;
        continue;
      }
      reason = DropReason::no_egress;
    }
    in_drops.add(reason);
    ++dropped;
  }
  add_node_counts(w, chain, v);
  stats.ports[chain.from]->dropped_total.fetch_add(dropped, std::memory_order_relaxed);
  // list[] holds indices below v.count (checked above).
  const uint16_t* len = v.len.framework_data();
  const uint64_t* rx_ns = v.rx_ns.framework_data();
  p.runs.clear();
  for (uint16_t eg : p.list_ports) {
    const uint32_t* list = lists[eg];
    uint64_t bytes = 0, run_rx_ns = 0, run_length = 0;
    for (uint32_t k = 0; k < list_len[eg]; ++k) {
      const uint32_t i = list[k];
      bytes += len[i];
      if (rx_ns[i] != run_rx_ns || run_length == 0) {
        if (run_length) p.runs.push_back({run_rx_ns, run_length});
        run_rx_ns = rx_ns[i];
        run_length = 0;
      }
      ++run_length;
    }
    if (run_length) p.runs.push_back({run_rx_ns, run_length});
    p.list_bytes[eg] = bytes;
  }
}

// Port p's tx lock, held until the batch is transmitted. Waits only while holding no other
// lock (else it first lets go of them), so egress threads never wait for each other in a cycle.
void Egress::Impl::hold_tx(Worker& w, uint16_t p) {
  if (!tx_locks[p] || w.held[p]) return;
  if (!tx_locks[p]->try_lock()) {
    release_tx(w);
    tx_locks[p]->lock();
  }
  w.held[p] = true;
  w.held_ports.push_back(p);
}

// Posts what the batch queued on each port it used (once per batch), then lets go of the locks.
void Egress::Impl::release_tx(Worker& w) {
  for (size_t p = 0; p < w.used.size(); ++p)
    if (w.used[p] && (w.held[p] || !tx_locks[p])) {
      rc.ports[p]->tx_burst_end();
      w.used[p] = false;
    }
  for (uint16_t p : w.held_ports) {
    w.held[p] = false;
    tx_locks[p]->unlock();
  }
  w.held_ports.clear();
}

// A prepared host batch at its turn: each port's list in one tx_list call, then what was sent
// counted. If a port refused frames, its lists are walked again to drop those as
// port_tx_error and count bytes and latency over the frames it took.
void Egress::Impl::transmit_lists(Worker& w, Prepared& p) {
  const BatchView v = p.batch->view();
  const Chain& chain = rc.chains[p.chain];
  const uint64_t now = monotonic_ns();
  uint32_t off = 0;
  bool all_sent = true;
  for (uint16_t eg : p.list_ports) {
    const uint32_t n = p.list_len[eg];
    uint8_t* ok = p.ok.data() + off;
    if (is_ring_port[eg]) {  // no host batch goes out through a gpuring port
      std::memset(ok, 0, n);
      w.sent[eg] = 0;
    } else {
      hold_tx(w, eg);
      w.used[eg] = true;
      w.sent[eg] = rc.ports[eg]->tx_list(v, p.list_data[eg], n, ok);
    }
    all_sent = all_sent && w.sent[eg] == n;
    off += n;
  }
  // Ports that queue tx descriptors post them once per batch.
  release_tx(w);
  uint64_t forwarded = 0, dropped = 0;
  if (all_sent) {
    for (const LatencyRun& r : p.runs) w.latency[p.chain].record(now - r.rx_ns, r.length);
  }
  off = 0;
  for (uint16_t eg : p.list_ports) {
    const uint32_t n = p.list_len[eg];
    uint64_t bytes = p.list_bytes[eg];
    if (!all_sent)
      bytes = account_refused(w, p.chain, v, p.list_data[eg], n, p.ok.data() + off, now, dropped);
    off += n;
    PortCounters& pc = *stats.ports[eg];
    pc.tx_packets.fetch_add(w.sent[eg], std::memory_order_relaxed);
    pc.tx_bytes.fetch_add(bytes, std::memory_order_relaxed);
    forwarded += w.sent[eg];
    w.sent[eg] = 0;
    p.list_len[eg] = 0;
  }
  p.list_ports.clear();
  PortCounters& in_pc = *stats.ports[chain.from];
  in_pc.forwarded.fetch_add(forwarded, std::memory_order_relaxed);
  in_pc.dropped_total.fetch_add(dropped, std::memory_order_relaxed);
}

// One list of which some frames were refused: those dropped as port_tx_error, latency
// recorded for the rest; returns the bytes sent.
uint64_t Egress::Impl::account_refused(Worker& w, size_t chain_index, const BatchView& v,
                                       const uint32_t* list, uint32_t n, const uint8_t* ok,
                                       uint64_t now, uint64_t& dropped) {
  const Chain& chain = rc.chains[chain_index];
  const uint16_t* len = v.len.framework_data();
  const uint64_t* rx_ns = v.rx_ns.framework_data();
  uint64_t bytes = 0, run_rx_ns = 0, run_length = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t i = list[k];
    if (!ok[k]) {
      w.port_drops[chain.from].add(DropReason::port_tx_error);
      ++dropped;
      continue;
    }
    bytes += len[i];
    if (rx_ns[i] != run_rx_ns || run_length == 0) {
      if (run_length) w.latency[chain_index].record(now - run_rx_ns, run_length);
      run_rx_ns = rx_ns[i];
      run_length = 0;
    }
    ++run_length;
  }
  if (run_length) w.latency[chain_index].record(now - run_rx_ns, run_length);
  return bytes;
}

// A GPU ring's batch at its turn, frame by frame: the frames the host reads come out of
// their slots first, and a packet egress drops gets its verdict so the ring frees its slot.
void Egress::Impl::transmit_frames(Worker& w, Batch& batch) {
  const size_t chain_index = batch.chain;
  const Chain& chain = rc.chains[chain_index];
  GpuRingFeed& feed = *hooks.feeds[chain_index];
  feed.prepare_egress(batch, chain);
  const BatchView v = batch.view();
  check_arrays(v);
  PortCounters& in_pc = *stats.ports[chain.from];
  const size_t nodes = chain.path.size();
  uint64_t forwarded = 0, dropped = 0;
  const uint64_t now = monotonic_ns();
  uint64_t run_rx_ns = 0, run_length = 0;
  for (uint32_t i = 0; i < v.count; ++i) {
    auto reason = static_cast<DropReason>(v.verdict[i]);
    if (reason != DropReason::none && v.next_nf[i] < nodes) {
      w.node_drops[v.next_nf[i]].add(reason);
      w.node_drop_bytes[v.next_nf[i]] += v.len[i];
    }
    if (reason == DropReason::none) {
      const uint16_t eg = v.out_port[i] != kNoPort ? v.out_port[i] : chain.to;
      if (eg == kNoPort || eg >= rc.ports.size()) {
        reason = DropReason::no_egress;
      } else {
        hold_tx(w, eg);
        w.used[eg] = true;
        if (!ring_port_tx(feed, batch, eg, v, i)) {
          reason = DropReason::port_tx_error;
        } else {
          ++w.sent[eg];
          w.sent_bytes[eg] += v.len[i];
          if (v.rx_ns[i] != run_rx_ns || run_length == 0) {
            if (run_length) w.latency[chain_index].record(now - run_rx_ns, run_length);
            run_rx_ns = v.rx_ns[i];
            run_length = 0;
          }
          ++run_length;
          ++forwarded;
          continue;
        }
      }
    }
    w.port_drops[chain.from].add(reason);
    ++dropped;
    // A ring slot whose packet egress dropped is freed by the ring's tx loop, not sent.
    v.verdict[i] = static_cast<uint8_t>(reason);
    batch.verdicts_changed = true;
  }
  if (run_length) w.latency[chain_index].record(now - run_rx_ns, run_length);
  release_tx(w);
  add_node_counts(w, chain, v);
  for (size_t p = 0; p < w.sent.size(); ++p)
    if (w.sent[p]) {
      stats.ports[p]->tx_packets.fetch_add(w.sent[p], std::memory_order_relaxed);
      stats.ports[p]->tx_bytes.fetch_add(w.sent_bytes[p], std::memory_order_relaxed);
      w.sent[p] = 0;
      w.sent_bytes[p] = 0;
    }
  in_pc.forwarded.fetch_add(forwarded, std::memory_order_relaxed);
  in_pc.dropped_total.fetch_add(dropped, std::memory_order_relaxed);
}

// Egress of one packet of a ring batch. Sent to its own gpuring port, it stays in its slot
// for the ring's tx loop; sent to a host port, it is copied out from its slot and marked so
// the ring frees the slot. No port transmits for another gpuring port (config refuses it).
bool Egress::Impl::ring_port_tx(GpuRingFeed& feed, Batch& batch, uint16_t eg, const BatchView& v,
                                uint32_t i) {
  if (feed.is_ring_port(eg)) return v.len[i] > 0 && v.len[i] <= v.stride;
  const bool ok = !is_ring_port[eg] && rc.ports[eg]->tx(v, i);
  v.verdict[i] = gpuring::kVerdictSentByHost;
  batch.verdicts_changed = true;
  return ok;
}

}  // namespace gpunfv
