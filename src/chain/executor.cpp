#include "chain/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "chain/batch_shape.h"
#include "chain/gpuring_feed.h"
#include "chain/processing_stage.h"
#include "core/batch_pool.h"
#include "core/blocking_queue.h"
#include "core/clock.h"
#include "io/forward/forward_threads.h"
#include "telemetry/report.h"

namespace gpunfv {

namespace {

uint32_t choose_workers(const RuntimeConfig& rc) {
  if (rc.settings.workers) return rc.settings.workers;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // Ingress and egress threads take a core each where there are enough.
  return cores > 3 ? cores - 2 : 1;
}

class Pipeline {
 public:
  Pipeline(RuntimeConfig& rc, const RunOptions& opt) : rc_(rc), opt_(opt) {
    shape_ = plan_batch_shape(rc);
    stats_.config_file = rc.file;
    stats_.backend = opt.backend == Backend::gpu ? "gpu" : "cpu";
    for (const auto& p : rc.ports) {
      stats_.ports.push_back(std::make_unique<PortCounters>());
      stats_.ports.back()->name = p->name();
    }
    for (const auto& nf : rc.nfs) {
      NfCounters c;
      c.name = nf->name();
      c.type = std::string(nf->type());
      stats_.nfs.push_back(c);
    }
    // The GPU stage first: it checks that a device exists before NFs upload tables to it.
    if (opt.backend == Backend::gpu) {
#if GPUNFV_HAVE_CUDA
      stage_ = make_gpu_stage(rc, shape_);
#else
      throw std::runtime_error("this build has no CUDA backend (nvcc was not found at build time)");
#endif
    } else {
      stage_ = make_cpu_stage(rc, choose_workers(rc));
    }
    for (auto& nf : rc.nfs) nf->prepare(opt.backend);

    MemoryKind mem = opt.backend == Backend::gpu ? MemoryKind::host_pinned : MemoryKind::host;
    pool_ = std::make_unique<BatchPool>(rc.settings.batches, shape_.capacity, shape_.stride, mem,
                                        shape_.result_stride);
    stats_.backend_detail = stage_->describe() + ", batch " +
                            std::to_string(rc.settings.batch_size) + " x " +
                            std::to_string(shape_.stride) + " B slots";
    next_seq_.assign(rc.chains.size(), 0);
    pending_.resize(rc.chains.size());
    make_ring_feeds(opt.backend);
  }

  RunStats run() {
    t0_ = monotonic_ns();
    if (opt_.duration_s > 0) deadline_ = t0_ + static_cast<uint64_t>(opt_.duration_s * 1e9);
    stage_->start([this](Batch* b) { finished_.push(b); });
    for (auto& f : feeds_)
      if (f) f->start();
    std::thread egress([this] { egress_loop(); });
    std::vector<std::thread> ingress;
    for (size_t c = 0; c < rc_.chains.size(); ++c) ingress.emplace_back([this, c] { ingress_loop(c); });
    ForwardThreads forwards(rc_, stats_);
    forwards.start([this] { return past_deadline(monotonic_ns()); });
    std::thread progress;
    if (opt_.progress) progress = std::thread([this] { progress_loop(); });

    for (auto& t : ingress) t.join();
    forwards.join();
    stage_->stop();
    finished_.close();
    egress.join();
    finish_ring_feeds();
    for (auto& p : rc_.ports)
      if (p->has_tx()) p->flush();
    for (auto& pc : stats_.ports)
      pc->dropped.add(DropReason::ingress_backpressure, pc->rx_queue_drops.load());
    collect_chain_metrics();
    stage_->report(stats_.scheduler);
    for (auto& nf : rc_.nfs) {
      nf->finish();
      nlohmann::json j = nlohmann::json::object();
      nf->report(j);
      stats_.nf_reports.push_back(std::move(j));
    }
    stats_.elapsed_s = (monotonic_ns() - t0_) / 1e9;
    done_ = true;
    if (progress.joinable()) progress.join();
    return std::move(stats_);
  }

 private:
  bool past_deadline(uint64_t now) const { return deadline_ && now >= deadline_; }

  void ingress_loop(size_t chain_index) {
    if (feeds_[chain_index]) return ring_ingress_loop(chain_index);
    const Chain& chain = rc_.chains[chain_index];
    Port& port = *rc_.ports[chain.from];
    PortCounters& pc = *stats_.ports[chain.from];
    const uint64_t timeout_ns = uint64_t(rc_.settings.batch_timeout_us) * 1000;
    uint64_t batch_seq = 0, pkt_seq = 0;
    for (;;) {
      if (port.rx_done() || past_deadline(monotonic_ns())) break;
      // Simmer: while the chain's first NF is slowed the port is not polled (a file or
      // generator source waits; a live source's own queue fills and counts its drops).
      count_rx_drops(port, pc);
      if (stage_->ingress_paused(static_cast<uint16_t>(chain_index))) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        continue;
      }
      std::optional<Batch*> got;
      while (!(got = pool_->acquire(std::chrono::milliseconds(10))))
        if (past_deadline(monotonic_ns())) break;
      if (!got) break;
      Batch* b = *got;
      uint64_t first_ns = 0;
      const uint32_t planned = stage_->ingress_batch(static_cast<uint16_t>(chain_index));
      const uint32_t cap = planned ? std::min(planned, b->capacity()) : b->capacity();
      while (b->count() < cap) {
        uint32_t before = b->count();
        uint32_t n = port.rx_burst(*b, cap - before);
        uint64_t now = monotonic_ns();
        if (n > 0) {
          BatchView v = b->view();
          uint64_t bytes = 0;
          for (uint32_t i = before; i < before + n; ++i) {
            v.rx_ns[i] = now;
            v.seq[i] = pkt_seq++;
            bytes += v.len[i];
          }
          pc.rx_packets.fetch_add(n, std::memory_order_relaxed);
          pc.rx_bytes.fetch_add(bytes, std::memory_order_relaxed);
          stage_->note_frames(n, bytes);
          if (!first_ns) first_ns = now;
          continue;
        }
        if (port.rx_done() || past_deadline(now)) break;
        if (first_ns && now - first_ns >= timeout_ns) break;
        std::this_thread::yield();
      }
      if (b->count() == 0) {
        pool_->release(b);
        continue;
      }
      b->chain = static_cast<uint16_t>(chain_index);
      b->batch_seq = batch_seq++;
      b->ingress_ns = first_ns;
      in_flight_.fetch_add(1);
      stage_->submit(b);
    }
    count_rx_drops(port, pc);
  }

  // A live source's own losses while the chain did not take its frames.
  void count_rx_drops(Port& port, PortCounters& pc) {
    if (uint64_t lost = port.take_rx_drops()) {
      pc.rx_packets.fetch_add(lost, std::memory_order_relaxed);
      pc.rx_queue_drops.fetch_add(lost, std::memory_order_relaxed);
      pc.dropped_total.fetch_add(lost, std::memory_order_relaxed);
    }
  }

  void egress_loop() {
    for (;;) {
      auto got = finished_.pop_for(std::chrono::milliseconds(10));
      if (!got) {
        if (finished_.closed_and_empty()) break;
        continue;
      }
      Batch* b = *got;
      auto& pend = pending_[b->chain];
      pend.emplace(b->batch_seq, b);
      // Transmit in ingress order: a batch waits for the ones received before it.
      for (auto it = pend.begin(); it != pend.end() && it->first == next_seq_[b->chain];
           it = pend.erase(it)) {
        transmit(*it->second);
        ++next_seq_[b->chain];
        in_flight_.fetch_sub(1);
        if (it->second->is_external())
          feeds_[it->second->chain]->give_back(it->second);
        else
          pool_->release(it->second);
      }
    }
  }

  void transmit(Batch& batch) {
    const Chain& chain = rc_.chains[batch.chain];
    const BatchView v = batch.view();
    const Port& in_port = *rc_.ports[chain.from];
    CollectContext ctx{in_port.name(), in_port.type() == "pcap"};
    for (size_t pos = 0; pos < chain.path.size(); ++pos)
      rc_.nfs[chain.path[pos]]->collect(v, static_cast<uint8_t>(pos), ctx);
    PortCounters& in_pc = *stats_.ports[chain.from];
    const size_t nodes = chain.path.size();
    uint64_t reached[kMaxChainNodes] = {};
    DropCounts node_drops_small[4];  // small chains counted without allocation
    std::vector<DropCounts> node_drops_long(nodes > 4 ? nodes : 0);
    auto node_drops = [&](size_t k) -> DropCounts& {
      return nodes > 4 ? node_drops_long[k] : node_drops_small[k];
    };
    uint64_t forwarded = 0, dropped = 0;
    used_egress_.assign(rc_.ports.size(), false);
    const uint64_t now = monotonic_ns();
    for (uint32_t i = 0; i < v.count; ++i) {
      auto reason = static_cast<DropReason>(v.verdict[i]);
      for (uint32_t bits = v.visited[i]; bits; bits &= bits - 1) ++reached[__builtin_ctz(bits)];
      // A drop with next_nf at a node is that NF's; kChainDone marks classify's drops.
      if (reason != DropReason::none && v.next_nf[i] < nodes) node_drops(v.next_nf[i]).add(reason);
      if (reason == DropReason::none) {
        uint16_t eg = v.out_port[i] != kNoPort ? v.out_port[i] : chain.to;
        if (eg == kNoPort || eg >= rc_.ports.size()) {
          reason = DropReason::no_egress;
        } else if (!port_tx(batch, eg, v, i)) {
          used_egress_[eg] = true;
          reason = DropReason::port_tx_error;
        } else {
          used_egress_[eg] = true;
          PortCounters& out = *stats_.ports[eg];
          out.tx_packets.fetch_add(1, std::memory_order_relaxed);
          out.tx_bytes.fetch_add(v.len[i], std::memory_order_relaxed);
          stats_.latency.record(now - v.rx_ns[i]);
          ++forwarded;
          continue;
        }
      }
      in_pc.dropped.add(reason);
      ++dropped;
    }
    // Ports that queue tx descriptors post them once per batch.
    for (size_t p = 0; p < used_egress_.size(); ++p)
      if (used_egress_[p]) rc_.ports[p]->tx_burst_end();
    in_pc.forwarded.fetch_add(forwarded, std::memory_order_relaxed);
    in_pc.dropped_total.fetch_add(dropped, std::memory_order_relaxed);
    for (size_t k = 0; k < nodes; ++k) {
      NfCounters& nc = stats_.nfs[chain.path[k]];
      const DropCounts& d = node_drops(k);
      nc.in += reached[k];
      nc.out += reached[k] - d.total();
      for (int r = 0; r < kDropReasonCount; ++r) nc.drops.by_reason[r] += d.by_reason[r];
    }
  }

  // --- chains fed by gpuring ports (chain/gpuring_feed.h) ---------------------------------

  void make_ring_feeds(Backend backend) {
    feeds_.resize(rc_.chains.size());
    is_ring_port_.assign(rc_.ports.size(), false);
    for (size_t p = 0; p < rc_.ports.size(); ++p) is_ring_port_[p] = rc_.ports[p]->type() == "gpuring";
    for (size_t c = 0; c < rc_.chains.size(); ++c)
      if (is_ring_port_[rc_.chains[c].from])
        feeds_[c] = std::make_unique<GpuRingFeed>(rc_, rc_.chains[c].from, shape_, backend);
  }

  // Ingress of a chain fed by a gpuring port: the rings' ready batches, packets in ring slots.
  void ring_ingress_loop(size_t chain_index) {
    GpuRingFeed& feed = *feeds_[chain_index];
    PortCounters& pc = *stats_.ports[rc_.chains[chain_index].from];
    uint64_t batch_seq = 0;
    for (;;) {
      // Simmer's pause: batches are not taken; the rings run out of free batches and the NIC
      // drops at its full rings (nic_rx_ring_full).
      if (stage_->ingress_paused(static_cast<uint16_t>(chain_index))) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        continue;
      }
      bool finished = false;
      Batch* b = feed.take(past_deadline(monotonic_ns()), finished);
      if (finished) break;
      if (!b) {
        std::this_thread::yield();
        continue;
      }
      const BatchView v = b->view();
      uint64_t bytes = 0;
      for (uint32_t i = 0; i < v.count; ++i) bytes += v.len[i];
      pc.rx_packets.fetch_add(v.count, std::memory_order_relaxed);
      pc.rx_bytes.fetch_add(bytes, std::memory_order_relaxed);
      stage_->note_frames(v.count, bytes);
      b->chain = static_cast<uint16_t>(chain_index);
      b->batch_seq = batch_seq++;
      b->ingress_ns = v.rx_ns[0];
      in_flight_.fetch_add(1);
      stage_->submit(b);
    }
  }

  // Egress of one packet. A packet of a ring batch sent to its own gpuring port stays in its
  // slot for the ring's tx loop; sent to a host port, it is copied out from its slot and marked
  // so the ring frees the slot. No port transmits for another gpuring port (config refuses it).
  bool port_tx(Batch& batch, uint16_t eg, const BatchView& v, uint32_t i) {
    if (!batch.is_external()) return !is_ring_port_[eg] && rc_.ports[eg]->tx(v, i);
    if (feeds_[batch.chain]->is_ring_port(eg)) return v.len[i] > 0 && v.len[i] <= v.stride;
    const bool ok = !is_ring_port_[eg] && rc_.ports[eg]->tx(v, i);
    v.verdict[i] = gpuring::kVerdictSentByHost;
    return ok;
  }

  void finish_ring_feeds() {
    for (size_t c = 0; c < feeds_.size(); ++c)
      if (feeds_[c])
        stats_.backend_detail += "; " + feeds_[c]->finish(*stats_.ports[rc_.chains[c].from]);
  }

  void collect_chain_metrics() {
    const uint64_t now = monotonic_ns();
    const double elapsed = (now - t0_) * 1e-9;
    for (size_t c = 0; c < rc_.chains.size(); ++c) {
      const Chain& chain = rc_.chains[c];
      nlohmann::json cj = {{"name", chain.name}, {"backpressure", chain.backpressure},
                           {"qt", chain.qt}, {"stages", nlohmann::json::array()}};
      if (const ChainFlow* f = stage_->flow(static_cast<uint16_t>(c))) {
        std::vector<StageMetrics> m = f->metrics(now);
        for (size_t s = 0; s < m.size(); ++s) {
          cj["stages"].push_back(
              {{"nf", s == 0 || s > chain.path.size() ? std::string() : rc_.nfs[chain.path[s - 1]]->name()},
               {"batches", m[s].batches},
               {"launches", m[s].launches},
               {"packets", m[s].packets},
               {"mean_queued_packets", elapsed > 0 ? m[s].queued_packet_seconds / elapsed : 0.0},
               {"max_queued_packets", m[s].max_queued_packets},
               {"slowed_s", m[s].slowed_ns * 1e-9},
               {"slow_down_signals", m[s].slow_down_signals},
               {"queue_full_drops", m[s].queue_full_drops}});
        }
      }
      stats_.chains.push_back(std::move(cj));
    }
  }

  void progress_loop() {
    uint64_t last_rx = 0, last_tx = 0, last_rxb = 0, last_txb = 0;
    uint64_t last_t = t0_;
    while (!done_) {
      for (int i = 0; i < 20 && !done_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (done_) break;
      uint64_t now = monotonic_ns();
      ProgressSample s;
      s.elapsed_s = (now - t0_) / 1e9;
      double dt = (now - last_t) / 1e9;
      uint64_t rx = 0, tx = 0, rxb = 0, txb = 0, dr = 0;
      for (const auto& p : stats_.ports) {
        rx += p->rx_packets;
        tx += p->tx_packets;
        rxb += p->rx_bytes;
        txb += p->tx_bytes;
        dr += p->dropped_total;
      }
      s.rx_pps = (rx - last_rx) / dt;
      s.tx_pps = (tx - last_tx) / dt;
      s.rx_bps = (rxb - last_rxb) * 8 / dt;
      s.tx_bps = (txb - last_txb) * 8 / dt;
      s.rx_total = rx;
      s.tx_total = tx;
      s.dropped_total = dr;
      s.in_flight = in_flight_.load();
      s.batches = rc_.settings.batches;
      s.detail = stage_->allocation_line();
      std::fputs(format_progress(s).c_str(), opt_.progress);
      std::fflush(opt_.progress);
      last_rx = rx, last_tx = tx, last_rxb = rxb, last_txb = txb, last_t = now;
    }
  }

  RuntimeConfig& rc_;
  RunOptions opt_;
  BatchShape shape_;
  RunStats stats_;
  std::unique_ptr<BatchPool> pool_;
  BlockingQueue<Batch*> finished_;
  std::unique_ptr<ProcessingStage> stage_;
  std::vector<uint64_t> next_seq_;
  std::vector<std::map<uint64_t, Batch*>> pending_;
  std::atomic<uint32_t> in_flight_{0};
  std::vector<bool> used_egress_;  // egress thread only
  std::vector<std::unique_ptr<GpuRingFeed>> feeds_;  // per chain; null unless from a gpuring port
  std::vector<bool> is_ring_port_;
  std::atomic<bool> done_{false};
  uint64_t t0_ = 0, deadline_ = 0;
};

}  // namespace

RunStats run(RuntimeConfig& rc, const RunOptions& opt) {
  Pipeline p(rc, opt);
  return p.run();
}

}  // namespace gpunfv
