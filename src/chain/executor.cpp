#include "chain/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "chain/batch_shape.h"
#include "chain/collect_workers.h"
#include "chain/gpuring_feed.h"
#include "chain/gpuring_forward.h"
#include "chain/processing_stage.h"
#include "core/batch_pool.h"
#include "core/blocking_queue.h"
#include "core/clock.h"
#include "core/thread_name.h"
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
  struct ChainSeq {
    std::mutex m;
    uint64_t batch = 0, packet = 0;  // next batch_seq, next packet seq
  };
  struct Egress {
    BlockingQueue<Batch*> finished;  // batches of this thread's chains, any order
    LatencyHistogram latency;
    std::vector<bool> used, held;    // per port: tx'd in this batch; lock held
    std::vector<uint64_t> sent, sent_bytes;  // per port, this batch (one atomic add per batch)
    std::vector<uint16_t> held_ports;
    // Per port: this batch's packets for it, in order (lists[p][0, list_len[p])), sized to a
    // whole batch once so the per-packet loop only stores and counts.
    std::vector<std::vector<uint32_t>> lists;
    std::vector<uint32_t*> list_data;  // lists[p].data()
    std::vector<uint32_t> list_len;
    std::vector<uint16_t> list_ports;          // ports with a non-empty list
    std::vector<uint8_t> ok;                   // tx_list's answer per packet of a list
    std::thread thread;
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
    for (size_t c = 0; c < rc.chains.size(); ++c) chain_seq_.push_back(std::make_unique<ChainSeq>());
    plan_egress();
    make_ring_feeds(opt.backend);
    ring_forwards_ = std::make_unique<GpuRingForwards>(rc, stats_);
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
    if (device_rings) stage_->prepare_for_persistent_kernels(host_chains ? pool_->batches() : std::vector<Batch*>{});
    // gpuring forwards and feeds first: starting one may fail (a ring kernel launch), and no
    // other thread runs yet.
    ring_forwards_->start();
    for (auto& f : feeds_)
      if (f) f->start();
    collect_ = std::make_unique<CollectWorkers>(rc_, [this](Batch* b) { pool_->release(b); });
    stage_->start([this](Batch* b) { egress_[egress_of_chain_[b->chain]]->finished.push(b); });
    for (auto& e : egress_) e->thread = std::thread([this, eg = e.get()] { egress_loop(*eg); });
    std::vector<std::thread> ingress;
    for (size_t c = 0; c < rc_.chains.size(); ++c) {
      const uint16_t threads = ingress_threads(rc_.chains[c]);
      for (uint16_t t = 0; t < threads; ++t)
        ingress.emplace_back([this, c, t, threads] { ingress_loop(c, t, threads); });
    }
    ForwardThreads forwards(rc_, stats_);
    forwards.start([this] { return past_deadline(monotonic_ns()); });
    std::thread progress;
    if (opt_.progress) progress = std::thread([this] { progress_loop(); });

    for (auto& t : ingress) t.join();
    forwards.join();
    ring_forwards_->finish([this] { return past_deadline(monotonic_ns()); });
    stage_->stop();
    for (auto& e : egress_) e->finished.close();
    for (auto& e : egress_) {
      e->thread.join();
      stats_.latency.merge(e->latency);
    }
    collect_->finish();  // every NF has seen every batch before it reports
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
    ring_forwards_->throw_if_failed();  // every thread has stopped: safe to leave by an exception
    return std::move(stats_);
  }

 private:
  bool past_deadline(uint64_t now) const { return deadline_ && now >= deadline_; }

  // Rx threads of a chain: one per rx queue of its port, at most settings.ingress_threads.
  uint16_t ingress_threads(const Chain& chain) const {
    const uint16_t queues = std::max<uint16_t>(1, rc_.ports[chain.from]->rx_queues());
    const uint32_t cap = rc_.settings.ingress_threads;
    return cap ? static_cast<uint16_t>(std::min<uint32_t>(queues, cap)) : queues;
  }

  // Rx thread `thread` of `threads` polls queues thread, thread + threads, ... of the chain's
  // port. A flow arrives on one queue, so one thread fills its batches, in order.
  void ingress_loop(size_t chain_index, uint16_t thread, uint16_t threads) {
    set_thread_name(fmt::format("gn-rx-c{}q{}", chain_index, thread));
    if (feeds_[chain_index]) {  // a gpuring port: one thread takes the rings' batches
      if (thread == 0) ring_ingress_loop(chain_index);
      return;
    }
    const Chain& chain = rc_.chains[chain_index];
    Port& port = *rc_.ports[chain.from];
    PortCounters& pc = *stats_.ports[chain.from];
    const uint64_t timeout_ns = uint64_t(rc_.settings.batch_timeout_us) * 1000;
    std::vector<uint16_t> queues;
    for (uint32_t q = thread; q < std::max<uint16_t>(1, port.rx_queues()); q += threads)
      queues.push_back(static_cast<uint16_t>(q));
    auto done = [&] {
      for (uint16_t q : queues)
        if (!port.rx_queue_done(q)) return false;
      return true;
    };
    size_t turn = 0;
    for (;;) {
      if (done() || past_deadline(monotonic_ns())) break;
      // Simmer: while the chain's first NF is slowed the port is not polled (a file or
      // generator source waits; a live source's own queue fills and counts its drops).
      count_rx_drops(port, pc, queues);
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
        const uint16_t q = queues[turn];
        if (++turn == queues.size()) turn = 0;
        uint32_t n = port.rx_queue_burst(q, *b, cap - before);
        uint64_t now = monotonic_ns();
        if (n > 0) {
          BatchView v = b->view();
          uint64_t bytes = 0;
          for (uint32_t i = before; i < before + n; ++i) {
            v.rx_ns[i] = now;
            bytes += v.len[i];
          }
          pc.rx_packets.fetch_add(n, std::memory_order_relaxed);
          pc.rx_bytes.fetch_add(bytes, std::memory_order_relaxed);
          stage_->note_frames(n, bytes);
          if (!first_ns) first_ns = now;
          continue;
        }
        if (turn != 0) continue;  // the thread's other queues may have frames
        if (done() || past_deadline(now)) break;
        if (first_ns && now - first_ns >= timeout_ns) break;
        std::this_thread::yield();
      }
      if (b->count() == 0) {
        pool_->release(b);
        continue;
      }
      b->chain = static_cast<uint16_t>(chain_index);
      b->ingress_ns = first_ns;
      number(*b);
      in_flight_.fetch_add(1);
      stage_->submit(b);
    }
    count_rx_drops(port, pc, queues);
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
  void count_rx_drops(Port& port, PortCounters& pc, const std::vector<uint16_t>& queues) {
    uint64_t lost = 0;
    for (uint16_t q : queues) lost += port.take_rx_queue_drops(q);
    if (lost) {
      pc.rx_packets.fetch_add(lost, std::memory_order_relaxed);
      pc.rx_queue_drops.fetch_add(lost, std::memory_order_relaxed);
      pc.dropped_total.fetch_add(lost, std::memory_order_relaxed);
    }
  }

  // Egress threads: chains that share an NF are one group (its collect() and counters have one
  // writer, and see its batches in order); groups go round robin to at most
  // settings.egress_threads threads. With several threads, ports whose tx is not thread-safe
  // get a lock (hold_tx).
  void plan_egress() {
    const size_t chains = rc_.chains.size();
    std::vector<size_t> group(chains);
    for (size_t c = 0; c < chains; ++c) group[c] = c;
    auto root = [&](size_t c) {
      while (group[c] != c) c = group[c] = group[group[c]];
      return c;
    };
    std::map<uint16_t, size_t> chain_of_nf;
    for (size_t c = 0; c < chains; ++c)
      for (uint16_t nf : rc_.chains[c].path) {
        auto [it, fresh] = chain_of_nf.emplace(nf, c);
        if (!fresh) group[root(c)] = root(it->second);
      }
    std::map<size_t, size_t> thread_of_group;
    const size_t cap = rc_.settings.egress_threads ? rc_.settings.egress_threads : SIZE_MAX;
    egress_of_chain_.resize(chains);
    for (size_t c = 0; c < chains; ++c) {
      auto [it, fresh] = thread_of_group.emplace(root(c), thread_of_group.size() % cap);
      egress_of_chain_[c] = it->second;
    }
    const size_t threads = std::max<size_t>(1, std::min(thread_of_group.size(), cap));
    for (size_t t = 0; t < threads; ++t) {
      egress_.push_back(std::make_unique<Egress>());
      egress_.back()->used.assign(rc_.ports.size(), false);
      egress_.back()->held.assign(rc_.ports.size(), false);
      egress_.back()->sent.assign(rc_.ports.size(), 0);
      egress_.back()->sent_bytes.assign(rc_.ports.size(), 0);
      egress_.back()->lists.assign(rc_.ports.size(), std::vector<uint32_t>(shape_.capacity));
      for (auto& l : egress_.back()->lists) egress_.back()->list_data.push_back(l.data());
      egress_.back()->list_len.assign(rc_.ports.size(), 0);
    }
    tx_locks_.resize(rc_.ports.size());
    for (size_t p = 0; p < rc_.ports.size(); ++p)
      if (threads > 1 && rc_.ports[p]->has_tx() && !rc_.ports[p]->tx_thread_safe())
        tx_locks_[p] = std::make_unique<std::mutex>();
  }

  void egress_loop(Egress& e) {
    set_thread_name("gn-egress");
    for (;;) {
      auto got = e.finished.pop_for(std::chrono::milliseconds(10));
      if (!got) {
        if (e.finished.closed_and_empty()) break;
        continue;
      }
      Batch* b = *got;
      // Read once: b goes back to the pool below, and another chain's ingress may take it.
      const uint16_t chain = b->chain;
      auto& pend = pending_[chain];
      pend.emplace(b->batch_seq, b);
      // Transmit in ingress order: a batch waits for the ones received before it.
      for (auto it = pend.begin(); it != pend.end() && it->first == next_seq_[chain];
           it = pend.erase(it)) {
        transmit(e, *it->second);
        ++next_seq_[chain];
        in_flight_.fetch_sub(1);
        const Port& in_port = *rc_.ports[rc_.chains[chain].from];
        const CollectContext ctx{in_port.name(), in_port.type() == "pcap"};
        if (it->second->is_external()) {
          // A gpuring batch goes back to its ring in the order taken, once NFs have read it
          // (prepare_egress ran in transmit).
          collect_->collect_and_wait(it->second, ctx);
          feeds_[chain]->give_back(it->second);
        } else {
          collect_->submit(it->second, ctx);
        }
      }
    }
  }

  // Port p's tx lock, held until the batch is transmitted. Waits only while holding no other
  // lock (else it first lets go of them), so egress threads never wait for each other in a cycle.
  void hold_tx(Egress& e, uint16_t p) {
    if (!tx_locks_[p] || e.held[p]) return;
    if (!tx_locks_[p]->try_lock()) {
      release_tx(e);
      tx_locks_[p]->lock();
    }
    e.held[p] = true;
    e.held_ports.push_back(p);
  }

  // Posts what the batch queued on each port it used (once per batch), then lets go of the locks.
  void release_tx(Egress& e) {
    for (size_t p = 0; p < e.used.size(); ++p)
      if (e.used[p] && (e.held[p] || !tx_locks_[p])) {
        rc_.ports[p]->tx_burst_end();
        e.used[p] = false;
      }
    for (uint16_t p : e.held_ports) {
      e.held[p] = false;
      tx_locks_[p]->unlock();
    }
    e.held_ports.clear();
  }

  // Each port's list in one tx_list call, then what it sent counted (bytes, latency per run of
  // packets received together) and what it refused dropped as port_tx_error.
  void send_lists(Egress& e, const BatchView& v, PortCounters& in_pc, uint64_t now,
                  uint64_t& forwarded, uint64_t& dropped) {
    for (uint16_t eg : e.list_ports) {
      const uint32_t* list = e.lists[eg].data();
      const uint32_t n = e.list_len[eg];
      e.list_len[eg] = 0;
      if (e.ok.size() < n) e.ok.resize(n);
      uint32_t sent = 0;
      if (is_ring_port_[eg]) {  // no host batch goes out through a gpuring port
        std::memset(e.ok.data(), 0, n);
      } else {
        hold_tx(e, eg);
        e.used[eg] = true;
        sent = rc_.ports[eg]->tx_list(v, list, n, e.ok.data());
      }
      // list[] holds indices below v.count (transmit checked the arrays against it).
      const uint16_t* len = v.len.framework_data();
      const uint64_t* rx_ns = v.rx_ns.framework_data();
      uint64_t bytes = 0, run_rx_ns = 0, run_length = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = list[k];
        if (!e.ok[k]) {
          in_pc.dropped.add(DropReason::port_tx_error);
          ++dropped;
          continue;
        }
        bytes += len[i];
        if (rx_ns[i] != run_rx_ns || run_length == 0) {
          if (run_length) e.latency.record(now - run_rx_ns, run_length);
          run_rx_ns = rx_ns[i];
          run_length = 0;
        }
        ++run_length;
      }
      if (run_length) e.latency.record(now - run_rx_ns, run_length);
      e.sent[eg] += sent;
      e.sent_bytes[eg] += bytes;
      forwarded += sent;
    }
    e.list_ports.clear();
  }

  void transmit(Egress& e, Batch& batch) {
    const Chain& chain = rc_.chains[batch.chain];
    // A GPU ring's device-resident batch: the frames the host reads come out of their slots.
    if (batch.is_external()) feeds_[batch.chain]->prepare_egress(batch, chain);
    const BatchView v = batch.view();
    PortCounters& in_pc = *stats_.ports[chain.from];
    const size_t nodes = chain.path.size();
    uint64_t reached[kMaxChainNodes] = {};
    DropCounts node_drops_small[4];  // small chains counted without allocation
    std::vector<DropCounts> node_drops_long(nodes > 4 ? nodes : 0);
    auto node_drops = [&](size_t k) -> DropCounts& {
      return nodes > 4 ? node_drops_long[k] : node_drops_small[k];
    };
    uint64_t forwarded = 0, dropped = 0;
    const uint64_t now = monotonic_ns();
    uint64_t run_rx_ns = 0, run_length = 0;  // packets received together share a latency
    // A host batch goes out port by port: packets sorted into per-port lists here, one tx_list
    // call per port below. A gpuring batch (its packets in ring slots) goes frame by frame.
    const bool by_lists = !batch.is_external();
    // This loop runs for every packet on one thread: the arrays are read through plain pointers,
    // their bounds checked once here rather than at every access.
    if (v.verdict.size() < v.count || v.visited.size() < v.count || v.next_nf.size() < v.count ||
        v.out_port.size() < v.count || v.len.size() < v.count || v.rx_ns.size() < v.count)
      throw std::logic_error("egress: a batch's arrays are shorter than its count");
    const uint8_t* verdict = v.verdict.framework_data();
    const uint32_t* visited = v.visited.framework_data();
    const uint8_t* next_nf = v.next_nf.framework_data();
    const uint16_t* out_port = v.out_port.framework_data();
    const size_t nports = rc_.ports.size();
    uint32_t* list_len = e.list_len.data();
    uint32_t* const* lists = e.list_data.data();
    // Packets each node saw: one pass per node over the visited bits (the compiler vectorises
    // it). Counting inside the packet loop incremented the same few counters packet after
    // packet, a chain of dependent memory updates: about 3 ns a packet at 4 NFs.
    for (size_t k = 0; k < nodes; ++k) {
      uint32_t saw = 0;
      for (uint32_t i = 0; i < v.count; ++i) saw += (visited[i] >> k) & 1u;
      reached[k] = saw;
    }
    for (uint32_t i = 0; i < v.count; ++i) {
      auto reason = static_cast<DropReason>(verdict[i]);
      // A drop with next_nf at a node is that NF's; kChainDone marks classify's drops.
      if (reason != DropReason::none && next_nf[i] < nodes) node_drops(next_nf[i]).add(reason);
      if (reason == DropReason::none) {
        uint16_t eg = out_port[i] != kNoPort ? out_port[i] : chain.to;
        if (eg == kNoPort || eg >= nports) {
          reason = DropReason::no_egress;
        } else if (by_lists) {
          uint32_t& len = list_len[eg];
          if (len == 0) e.list_ports.push_back(eg);
          lists[eg][len++] = i;
          continue;
        } else {
          hold_tx(e, eg);
          e.used[eg] = true;
          if (!port_tx(batch, eg, v, i)) {
            reason = DropReason::port_tx_error;
          } else {
            ++e.sent[eg];
            e.sent_bytes[eg] += v.len[i];
            if (v.rx_ns[i] != run_rx_ns || run_length == 0) {
              if (run_length) e.latency.record(now - run_rx_ns, run_length);
              run_rx_ns = v.rx_ns[i];
              run_length = 0;
            }
            ++run_length;
            ++forwarded;
            continue;
          }
        }
      }
      in_pc.dropped.add(reason);
      ++dropped;
      // A ring slot whose packet egress dropped is freed by the ring's tx loop, not sent.
      if (batch.is_external()) {
        v.verdict[i] = static_cast<uint8_t>(reason);
        batch.verdicts_changed = true;
      }
    }
    if (run_length) e.latency.record(now - run_rx_ns, run_length);
    if (by_lists) send_lists(e, v, in_pc, now, forwarded, dropped);
    // Ports that queue tx descriptors post them once per batch.
    release_tx(e);
    for (size_t p = 0; p < e.sent.size(); ++p)
      if (e.sent[p]) {
        stats_.ports[p]->tx_packets.fetch_add(e.sent[p], std::memory_order_relaxed);
        stats_.ports[p]->tx_bytes.fetch_add(e.sent_bytes[p], std::memory_order_relaxed);
        e.sent[p] = e.sent_bytes[p] = 0;
      }
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

  // Egress of one packet. A packet of a ring batch sent to its own gpuring port stays in its
  // slot for the ring's tx loop; sent to a host port, it is copied out from its slot and marked
  // so the ring frees the slot. No port transmits for another gpuring port (config refuses it).
  bool port_tx(Batch& batch, uint16_t eg, const BatchView& v, uint32_t i) {
    if (!batch.is_external()) return !is_ring_port_[eg] && rc_.ports[eg]->tx(v, i);
    if (feeds_[batch.chain]->is_ring_port(eg)) return v.len[i] > 0 && v.len[i] <= v.stride;
    const bool ok = !is_ring_port_[eg] && rc_.ports[eg]->tx(v, i);
    v.verdict[i] = gpuring::kVerdictSentByHost;
    batch.verdicts_changed = true;
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
               {"busy_s", m[s].busy_ns * 1e-9},
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
  std::unique_ptr<ProcessingStage> stage_;
  std::unique_ptr<CollectWorkers> collect_;
  std::vector<uint64_t> next_seq_;
  std::vector<std::map<uint64_t, Batch*>> pending_;
  std::atomic<uint32_t> in_flight_{0};
  std::vector<std::unique_ptr<ChainSeq>> chain_seq_;
  std::vector<std::unique_ptr<Egress>> egress_;
  std::vector<size_t> egress_of_chain_;
  std::vector<std::unique_ptr<std::mutex>> tx_locks_;  // per port; null: no lock needed
  std::vector<std::unique_ptr<GpuRingFeed>> feeds_;  // per chain; null unless from a gpuring port
  std::unique_ptr<GpuRingForwards> ring_forwards_;   // forwards between gpuring ports
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
