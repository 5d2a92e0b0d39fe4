#include "chain/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "chain/batch_shape.h"
#include "chain/chain_packet.h"
#include "chain/collect_workers.h"
#include "chain/egress.h"
#include "chain/gpuring_feed.h"
#include "chain/gpuring_forward.h"
#include "chain/ingress_share.h"
#include "chain/live_metrics.h"
#include "chain/processing_stage.h"
#include "core/batch_pool.h"
#include "core/blocking_queue.h"
#include "core/clock.h"
#include "core/thread_name.h"
#include "chain/forward_threads.h"
#include "core/debug_switches.h"
#include "io/gpuring/loops/kernel_loading.h"
#include "chain/timeseries.h"
#include "nf/nf_process/nf_process.h"

namespace gpunfv {

namespace {

uint32_t choose_workers(const RuntimeConfig& rc) {
  if (rc.settings.workers) return rc.settings.workers;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // Ingress and egress threads take a core each where there are enough.
  return cores > 3 ? cores - 2 : 1;
}

// GPU backend: NFs that sit at one node of each chain at most may count on the device
// (NetworkFunction::count_on_device); their collect() then leaves the host.
// Not to an NF on a chain the persistent pipeline's kernel runs: the kernel runs the NF's
// per-packet function only, not the counting kernels its process_gpu() would add.
void offer_device_counts(const RuntimeConfig& rc) {
  for (size_t nf = 0; nf < rc.nfs.size(); ++nf) {
    bool once = true, per_packet = false;
    for (const Chain& c : rc.chains) {
      const auto nodes = std::count(c.path.begin(), c.path.end(), uint16_t(nf));
      once = once && nodes <= 1;
      per_packet = per_packet || (nodes > 0 && rc.settings.gpu_pipeline == "persistent" && chain_runs_per_packet(rc, c));
    }
    if (once && !per_packet) rc.nfs[nf]->count_on_device();
  }
}

// Chains none of whose NFs reads results on the host (all count on the device or collect
// nothing): their host batches come back with what egress reads only. GPUNFV_DEBUG_FULL_DOWNLOAD=1
// brings every batch back whole, to measure the difference.
std::vector<bool> egress_only_chains(const RuntimeConfig& rc) {
  std::vector<bool> out(rc.chains.size(), false);
  if (debug_switches().full_download) return out;
  for (size_t c = 0; c < rc.chains.size(); ++c)
    out[c] = std::none_of(rc.chains[c].path.begin(), rc.chains[c].path.end(),
                          [&](uint16_t nf) { return rc.nfs[nf]->collects(); });
  return out;
}

class Pipeline {
  struct ChainSeq {
    std::mutex m;
    uint64_t batch = 0, packet = 0;  // next batch_seq, next packet seq
  };
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
    // Before any CUDA call: a gpuring port's unsupported combinations, and eager kernel
    // loading where a persistent ring kernel will run beside the chain's (gpuring_feed.h).
    GpuRingFeed::check_run_ends(rc, opt.duration_s);
    GpuRingFeed::check_config(rc, opt.backend);
    // The persistent pipeline's kernels spin as a ring's do: the same environment.
    if (opt.backend == Backend::gpu && rc.settings.gpu_pipeline == "persistent")
      gpuring::request_persistent_kernel_environment();
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
    if (opt.backend == Backend::gpu) offer_device_counts(rc);
    for (auto& nf : rc.nfs) nf->prepare(opt.backend);
    if (opt.backend == Backend::gpu) stage_->set_egress_only_download(egress_only_chains(rc));

    const bool gpu = opt.backend == Backend::gpu;
    MemoryKind mem = rc.nf_processes ? (gpu ? MemoryKind::host_shared_pinned : MemoryKind::host_shared)
                     : gpu           ? MemoryKind::host_pinned
                                     : MemoryKind::host;
    pool_ = std::make_unique<BatchPool>(rc.settings.batches, shape_.capacity, shape_.stride, mem,
                                        shape_.result_stride);
    stats_.backend_detail = stage_->describe() + ", batch " +
                            std::to_string(rc.settings.batch_size) + " x " +
                            std::to_string(shape_.stride) + " B slots";
    for (size_t c = 0; c < rc.chains.size(); ++c) chain_seq_.push_back(std::make_unique<ChainSeq>());
    make_ring_feeds(opt.backend);
    make_egress();
    ring_forwards_ = std::make_unique<GpuRingForwards>(rc, stats_);
  }

  // An exception left run(): nothing may read this pipeline's counters any more (the metrics
  // board, the control socket's live-stats reader).
  ~Pipeline() {
    done_ = true;
    if (opt_.metrics) opt_.metrics->clear();
    if (opt_.live_stats && !stats_released_) opt_.live_stats(nullptr);
    if (sampler_.joinable()) sampler_.join();
  }

  RunStats run() {
    t0_ = monotonic_ns();
    if (opt_.duration_s > 0) deadline_ = t0_ + static_cast<uint64_t>(opt_.duration_s * 1e9);
    // A GPU ring's persistent kernel will run beside the chains: the GPU stage makes its
    // streams, events and device batches now, while CUDA may still synchronize the device.
    bool device_rings = false, host_chains = false;
    for (auto& f : feeds_) {
      device_rings = device_rings || (f && f->device_resident());
      host_chains = host_chains || !f;
    }
    if (device_rings || stage_->runs_persistent_kernels())
      stage_->prepare_for_persistent_kernels(host_chains ? pool_->batches() : std::vector<Batch*>{});
    // gpuring forwards and feeds first: starting one may fail (a ring kernel launch), and no
    // other thread runs yet.
    ring_forwards_->start();
    for (auto& f : feeds_)
      if (f) f->start();
    collect_ = std::make_unique<CollectWorkers>(rc_, [this](Batch* b) { pool_->release(b); });
    stage_->start([this](Batch* b) { egress_->push(b); });
    egress_->start();
    std::vector<std::thread> ingress;
    for (size_t c = 0; c < rc_.chains.size(); ++c) {
      const uint16_t threads = ingress_threads(rc_.chains[c]);
      const uint16_t queues = std::max<uint16_t>(1, rc_.ports[rc_.chains[c].from]->rx_queues());
      shares_.push_back(std::make_unique<IngressShare>(threads, queues, rc_.settings.ingress_adapt));
      for (uint16_t t = 0; t < threads; ++t)
        ingress.emplace_back([this, c, t] { ingress_loop(c, t); });
    }
    ForwardThreads forwards(rc_, stats_);
    forwards.start([this] { return past_deadline(monotonic_ns()); });
    std::thread progress;
    if (opt_.progress) progress = std::thread([this] { progress_loop(); });
    sampler_ = std::thread([this] { sample_loop(); });
    if (opt_.metrics) opt_.metrics->set_live([this] { return live(); });
    if (opt_.live_stats) opt_.live_stats(&stats_);

    for (auto& t : ingress) t.join();
    forwards.join();
    ring_forwards_->finish([this] { return past_deadline(monotonic_ns()); });
    stage_->stop();
    egress_->finish();
    collect_->finish();  // every NF has seen every batch before it reports
    finish_ring_feeds();
    for (auto& p : rc_.ports)
      if (p->has_tx()) p->flush();
    for (auto& pc : stats_.ports)
      pc->dropped.add(DropReason::ingress_backpressure, pc->rx_queue_drops.load());
    collect_chain_metrics();
    stage_->report(stats_.scheduler);
    if (rc_.settings.ingress_adapt) report_ingress(stats_.scheduler);
    for (auto& nf : rc_.nfs) {
      nf->finish();
      nlohmann::json j = nlohmann::json::object();
      nf->report(j);
      if (nf->quarantined()) j["quarantined"] = true;
      stats_.nf_reports.push_back(std::move(j));
      if (auto* proxy = dynamic_cast<const NfProcessProxy*>(nf.get()))
        stats_.processes[proxy->nf_process().name()] = proxy->nf_process().report();
    }
    stats_.elapsed_s = (monotonic_ns() - t0_) / 1e9;
    if (opt_.live_stats) opt_.live_stats(nullptr);
    stats_released_ = true;
    done_ = true;
    if (progress.joinable()) progress.join();
    if (sampler_.joinable()) sampler_.join();
    timeseries_.add(live());  // the last partial second: the samples add up to the totals
    stats_.timeseries = timeseries_.to_json();
    if (opt_.metrics) opt_.metrics->set_final(metrics_from_stats(stats_));
    ring_forwards_->throw_if_failed();  // every thread has stopped: safe to leave by an exception
    return std::move(stats_);
  }

 private:
  // The one check that ends the run early: --duration, or a stop asked from outside.
  bool past_deadline(uint64_t now) const {
    return (deadline_ && now >= deadline_) || (opt_.stop && opt_.stop->load(std::memory_order_relaxed));
  }

  // Rx threads of a chain: one per rx queue of its port, at most settings.ingress_threads.
  uint16_t ingress_threads(const Chain& chain) const {
    const uint16_t queues = std::max<uint16_t>(1, rc_.ports[chain.from]->rx_queues());
    const uint32_t cap = rc_.settings.ingress_threads;
    return cap ? static_cast<uint16_t>(std::min<uint32_t>(queues, cap)) : queues;
  }

  // One rx thread's view of its chain's port: the queues it polls now and where it is among
  // them, and its polls since it last reported them (chain/ingress_share.h).
  struct RxThread {
    size_t chain = 0;
    Port* port = nullptr;
    PortCounters* pc = nullptr;
    std::vector<uint16_t> queues;
    size_t turn = 0;
    uint64_t deadline_ns = 0;
    uint64_t polls = 0, full_polls = 0;
    bool done() const {
      for (uint16_t q : queues)
        if (!port->rx_queue_done(q)) return false;
      return true;
    }
    bool port_done() const {
      for (uint16_t q = 0; q < std::max<uint16_t>(1, port->rx_queues()); ++q)
        if (!port->rx_queue_done(q)) return false;
      return true;
    }
  };

  // Rx thread `thread` of the chain polls the queues its IngressShare gives it at each batch
  // boundary (without ingress_adapt: queues thread, thread + threads, ... for the whole run). A
  // flow arrives on one queue, so one thread at a time fills its batches, in order.
  void ingress_loop(size_t chain_index, uint16_t thread) {
    set_thread_name(fmt::format("gn-rx-c{}q{}", chain_index, thread));
    use_fine_timer_slack();
    if (feeds_[chain_index]) {  // a gpuring port: one thread takes the rings' batches
      if (thread == 0) ring_ingress_loop(chain_index);
      return;
    }
    const Chain& chain = rc_.chains[chain_index];
    IngressShare& share = *shares_[chain_index];
    RxThread rx;
    rx.chain = chain_index;
    rx.port = rc_.ports[chain.from].get();
    rx.pc = stats_.ports[chain.from].get();
    rx.deadline_ns = uint64_t(chain.batch_deadline_us) * 1000;
    for (;;) {
      share.queues_of(thread, rx.queues);
      if (rx.turn >= rx.queues.size()) rx.turn = 0;
      const uint64_t now = monotonic_ns();
      if (past_deadline(now)) break;
      if (rx.queues.empty() || rx.done()) {  // idle, or its queues have ended before the others
        if (rx.port_done()) break;
        share.adjust(now);
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      // Simmer: while the chain's first NF is slowed the port is not polled (a file or
      // generator source waits; a live source's own queue fills and counts its drops).
      const bool dropped = count_rx_drops(*rx.port, *rx.pc, rx.queues);
      share.note_polls(thread, std::exchange(rx.polls, 0), std::exchange(rx.full_polls, 0), dropped);
      share.adjust(now);
      if (stage_->ingress_paused(static_cast<uint16_t>(chain_index))) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        continue;
      }
      std::optional<Batch*> got;
      while (!(got = pool_->acquire(std::chrono::milliseconds(10))))
        if (past_deadline(monotonic_ns())) break;
      if (!got) break;
      Batch* b = *got;
      const uint32_t planned = stage_->ingress_batch(static_cast<uint16_t>(chain_index));
      const uint32_t target = planned ? std::min(planned, b->capacity()) : b->capacity();
      const uint64_t first_ns = fill_batch(rx, *b, target);
      if (b->count() == 0) {
        pool_->release(b);
        continue;
      }
      b->chain = static_cast<uint16_t>(chain_index);
      b->ingress_ns = first_ns;
      stage_->note_batch(b->chain, b->count() >= target);
      number(*b);
      in_flight_.fetch_add(1);
      stage_->submit(b);
    }
    count_rx_drops(*rx.port, *rx.pc, rx.queues);
  }

  void report_ingress(nlohmann::json& j) const {
    j["ingress"] = nlohmann::json::array();
    for (size_t c = 0; c < shares_.size(); ++c)
      j["ingress"].push_back({{"chain", rc_.chains[c].name},
                              {"threads", shares_[c]->threads()},
                              {"active_at_end", shares_[c]->active()},
                              {"woken", shares_[c]->grown()},
                              {"let_go", shares_[c]->shrunk()}});
  }

  // Fills b until it holds `target` frames or its first frame is the chain's deadline old,
  // whatever the source is doing, or the source is done. While the chain has batches waiting
  // (backlogged) it goes on filling, up to the batch's capacity: it would wait behind them
  // anyway, and a fuller batch costs the chain less than two (each batch pays its launches and
  // copies), so under load batches grow until the chain keeps up instead of its queues
  // growing. Returns the first frame's time (0: none came).
  uint64_t fill_batch(RxThread& rx, Batch& b, uint32_t target) {
    uint64_t first_ns = 0;
    while (b.count() < b.capacity()) {
      const uint64_t now = monotonic_ns();
      const bool due = b.count() >= target || (first_ns && now - first_ns >= rx.deadline_ns);
      if (due && !backlogged(rx.chain)) break;
      const uint32_t before = b.count();
      const uint16_t q = rx.queues[rx.turn];
      if (++rx.turn == rx.queues.size()) rx.turn = 0;
      const uint32_t want = (before < target ? target : b.capacity()) - before;
      const uint32_t n = rx.port->rx_queue_burst(q, b, want);
      ++rx.polls;
      rx.full_polls += n >= IngressShare::kFullPoll;
      if (n > 0) {
        stamp_received(rx, b, before, n, now);
        if (!first_ns) first_ns = now;
        continue;
      }
      if (rx.turn != 0) continue;  // the thread's other queues may have frames
      if (rx.done() || past_deadline(now)) break;
      std::this_thread::yield();
    }
    return first_ns;
  }

  // Frames [first, first + n) of b arrived at `now`: their rx time, and the port's counts.
  void stamp_received(RxThread& rx, Batch& b, uint32_t first, uint32_t n, uint64_t now) {
    BatchView v = b.view();
    uint64_t bytes = 0;
    for (uint32_t i = first; i < first + n; ++i) {
      v.rx_ns[i] = now;
      bytes += v.len[i];
    }
    rx.pc->rx_packets.fetch_add(n, std::memory_order_relaxed);
    rx.pc->rx_bytes.fetch_add(bytes, std::memory_order_relaxed);
    stage_->note_frames(n, bytes);
  }

  bool backlogged(size_t chain_index) const {
    const ChainFlow* f = stage_->flow(static_cast<uint16_t>(chain_index));
    return f && f->backlogged();
  }

  // Gives the batch its place in the chain (batch_seq: egress and the stage queues restore it)
  // and its packets their numbers (seq), both at once, so packet numbers grow in batch order
  // whichever rx thread submits first; IPsec's CPU ordered pass relies on that
  // (nf/ipsec/ingress_order.h).
  void number(Batch& b) {
    ChainSeq& cs = *chain_seq_[b.chain];
    uint64_t first = 0;
    {
      std::lock_guard<std::mutex> lk(cs.m);
      b.batch_seq = cs.batch++;
      first = cs.packet;
      cs.packet += b.count();
    }
    BatchView v = b.view();
    for (uint32_t i = 0; i < v.count; ++i) v.seq[i] = first + i;
  }

  // A live source's own losses while the chain did not take its frames.
  // Whether the queues lost frames since the last look.
  bool count_rx_drops(Port& port, PortCounters& pc, const std::vector<uint16_t>& queues) {
    uint64_t lost = 0;
    for (uint16_t q : queues) lost += port.take_rx_queue_drops(q);
    if (lost) {
      pc.rx_packets.fetch_add(lost, std::memory_order_relaxed);
      pc.rx_queue_drops.fetch_add(lost, std::memory_order_relaxed);
      pc.dropped_total.fetch_add(lost, std::memory_order_relaxed);
    }
    return lost != 0;
  }

  // Egress (chain/egress.h) hands each batch back here in ingress order per chain: to the
  // collect workers, and a gpuring batch back to its ring once the NFs have read it.
  void make_egress() {
    Egress::Hooks hooks;
    for (auto& f : feeds_) hooks.feeds.push_back(f.get());
    hooks.hand_off = [this](Batch* b) {
      in_flight_.fetch_sub(1);
      const uint16_t chain = b->chain;  // read first: b may go back to the pool below
      const Port& in_port = *rc_.ports[rc_.chains[chain].from];
      const CollectContext ctx{in_port.name(), in_port.type() == "pcap"};
      if (b->is_external()) {
        collect_->collect_and_wait(b, ctx);
        feeds_[chain]->give_back(b);
      } else {
        collect_->submit(b, ctx);
      }
    };
    egress_ = std::make_unique<Egress>(rc_, stats_, shape_, std::move(hooks));
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
      uint64_t bytes = 0;  // from the ring: a device-resident batch's lengths are not on the host
      Batch* b = feed.take(past_deadline(monotonic_ns()), finished, bytes);
      if (finished) break;
      if (!b) {
        std::this_thread::yield();
        continue;
      }
      pc.rx_packets.fetch_add(b->count(), std::memory_order_relaxed);
      pc.rx_bytes.fetch_add(bytes, std::memory_order_relaxed);
      stage_->note_frames(b->count(), bytes);
      b->chain = static_cast<uint16_t>(chain_index);
      b->batch_seq = batch_seq++;
      b->ingress_ns = monotonic_ns();
      in_flight_.fetch_add(1);
      stage_->submit(b);
    }
  }

  void finish_ring_feeds() {
    for (size_t c = 0; c < feeds_.size(); ++c)
      if (feeds_[c])
        stats_.backend_detail += "; " + feeds_[c]->finish(*stats_.ports[rc_.chains[c].from]);
  }

  void collect_chain_metrics() {
    const uint64_t now = monotonic_ns();
    const double elapsed = (now - t0_) * 1e-9;
    const std::vector<std::vector<double>> shares = stage_->sm_shares();
    for (size_t c = 0; c < rc_.chains.size(); ++c) {
      const Chain& chain = rc_.chains[c];
      nlohmann::json cj = {{"name", chain.name}, {"backpressure", chain.backpressure},
                           {"qt", chain.qt}, {"stages", nlohmann::json::array()}};
      add_chain_latency(cj, chain, c < stats_.chain_latency.size() ? stats_.chain_latency[c]
                                                                   : LatencyHistogram{});
      if (const ChainFlow* f = stage_->flow(static_cast<uint16_t>(c))) {
        std::vector<StageMetrics> m = f->metrics(now);
        for (size_t s = 0; s < m.size(); ++s) {
          cj["stages"].push_back(
              {{"nf", s == 0 || s > chain.path.size() ? std::string() : rc_.nfs[chain.path[s - 1]]->name()},
               {"batches", m[s].batches},
               {"launches", m[s].launches},
               {"packets", m[s].packets},
               {"mean_queued_packets", elapsed > 0 ? m[s].queued_packet_seconds / elapsed : 0.0},
               {"queued_packet_seconds", m[s].queued_packet_seconds},
               {"max_queued_packets", m[s].max_queued_packets},
               {"slowed_s", m[s].slowed_ns * 1e-9},
               {"busy_s", m[s].busy_ns * 1e-9},
               {"slow_down_signals", m[s].slow_down_signals},
               {"queue_full_drops", m[s].queue_full_drops}});
        }
      }
      // GPU sharing: the plan the run ended with (the time series has it over time).
      if (c < shares.size()) {
        const uint32_t planned = stage_->ingress_batch(static_cast<uint16_t>(c));
        cj["planned_batch"] = planned ? planned : rc_.settings.batch_size;
        for (size_t k = 0; k < shares[c].size() && k + 1 < cj["stages"].size(); ++k)
          cj["stages"][k + 1]["sm_share"] = shares[c][k];
      }
      stats_.chains.push_back(std::move(cj));
    }
  }

  // The chain's bound, its measured rx-to-tx quantiles and whether p99 kept the bound (null
  // where no packet of the chain was timed).
  static void add_chain_latency(nlohmann::json& cj, const Chain& chain, const LatencyHistogram& h) {
    cj["latency_bound_us"] = chain.latency_bound_us;
    cj["batch_deadline_us"] = chain.batch_deadline_us;
    cj["latency_ns"] = {{"p50", h.quantile(0.5)}, {"p99", h.quantile(0.99)},
                        {"p999", h.quantile(0.999)}, {"max", h.max()}, {"count", h.count()}};
    cj["bound_held"] = h.count() ? nlohmann::json(double(h.quantile(0.99)) <= chain.latency_bound_us * 1e3)
                                 : nlohmann::json(nullptr);
  }

  MetricsSnapshot live() const {
    return live_metrics({rc_, stats_, *egress_, *stage_, opt_.backend, t0_});
  }

  // One time-series sample a second, on the second since the start (chain/timeseries.h).
  void sample_loop() {
    set_thread_name("gn-sampler");
    for (uint64_t k = 1;; ++k) {
      const uint64_t due = t0_ + k * 1'000'000'000ull;
      for (uint64_t now = monotonic_ns(); !done_ && now < due; now = monotonic_ns())
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<uint64_t>(due - now, 50'000'000)));
      if (done_) return;
      timeseries_.add(live());
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
        s.rx_bytes_counted &= p->rx_bytes_counted.load(std::memory_order_relaxed);
        s.tx_bytes_counted &= p->tx_bytes_counted.load(std::memory_order_relaxed);
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
      opt_.progress(s);
      last_rx = rx, last_tx = tx, last_rxb = rxb, last_txb = txb, last_t = now;
    }
  }

  RuntimeConfig& rc_;
  RunOptions opt_;
  BatchShape shape_;
  RunStats stats_;
  std::unique_ptr<BatchPool> pool_;
  std::unique_ptr<ProcessingStage> stage_;
  std::unique_ptr<CollectWorkers> collect_;
  std::atomic<uint32_t> in_flight_{0};
  std::vector<std::unique_ptr<ChainSeq>> chain_seq_;
  std::vector<std::unique_ptr<IngressShare>> shares_;  // by chain
  std::unique_ptr<Egress> egress_;
  std::vector<std::unique_ptr<GpuRingFeed>> feeds_;  // per chain; null unless from a gpuring port
  std::unique_ptr<GpuRingForwards> ring_forwards_;   // forwards between gpuring ports
  std::vector<bool> is_ring_port_;
  std::atomic<bool> done_{false};
  bool stats_released_ = false;
  uint64_t t0_ = 0, deadline_ = 0;
  std::thread sampler_;
  TimeSeries timeseries_;  // the sampler thread's until it is joined
};

}  // namespace

RunStats run(RuntimeConfig& rc, const RunOptions& opt) {
  Pipeline p(rc, opt);
  return p.run();
}

}  // namespace gpunfv
