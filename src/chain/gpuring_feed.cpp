#include "chain/gpuring_feed.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "chain/ring_batch_transfer.h"
#include "core/error.h"
#include "gpu/persistent_kernel_guard.h"
#include "io/gpuring/gpuring_port.h"
#include "io/gpuring/loops/kernel_loading.h"

namespace gpunfv {

namespace {

// Limits of the device path's blocking steps (the HangWatchdog ends the process past them).
constexpr double kLaunchLimitS = 30;   // loading and launching the ring kernel
constexpr double kStallLimitS = 60;    // a batch taken and not given back, with no other progress
constexpr double kDrainLimitS = 30;    // the loops' drain once every batch is back
constexpr double kAbortWaitS = 5;      // the loops' exit after an abort

Port* port_named(RuntimeConfig& rc, const std::string& name) {
  for (auto& p : rc.ports)
    if (p->name() == name) return p.get();
  return nullptr;
}

bool rx_all_done(const gpuring::RingSet& rings) {
  for (uint32_t r = 0; r < rings.params().rings; ++r)
    if (!__atomic_load_n(&rings.host_done()[r].rx, __ATOMIC_ACQUIRE)) return false;
  return true;
}

}  // namespace

gpuring::Placement GpuRingFeed::placement_on(const GpuRingPort& port, Backend backend) {
  const gpuring::GpuRingConfig& cfg = port.config();
  if (cfg.placement_auto) return backend == Backend::gpu ? gpuring::Placement::device : gpuring::Placement::host;
  return cfg.placement;
}

void GpuRingFeed::check_config(const RuntimeConfig& rc, Backend backend) {
  bool device_rings = false;
  for (size_t p = 0; p < rc.ports.size(); ++p) {
    const auto* port = dynamic_cast<const GpuRingPort*>(rc.ports[p].get());
    if (!port) continue;
    const gpuring::GpuRingConfig& cfg = port->config();
    // runtime_config refuses a gpuring port that feeds no chain, and a port feeding two.
    bool feeds = false;
    for (const Chain& c : rc.chains) feeds = feeds || c.from == p;
    if (!feeds) continue;
    // A real NIC's preconditions first (no such device, not vfio-pci, no DPDK or CUDA in this
    // build): the most basic thing missing is named before anything else.
    if (cfg.real_nic()) gpuring::DpdkNic::precheck(cfg);
    const gpuring::Placement where = placement_on(*port, backend);
    if (backend == Backend::cpu && where == gpuring::Placement::device)
      throw ConfigError(cfg.placement_where,
                        "gpuring port '" + port->name() + "': placement: device needs --backend gpu (the "
                        "CPU backend cannot reach packets in GPU memory); use placement: host or auto "
                        "on the CPU backend");
    if (backend == Backend::gpu && where == gpuring::Placement::host)
      throw ConfigError(cfg.placement_where,
                        "gpuring port '" + port->name() + "': placement: host runs on the CPU backend "
                        "only (the GPU backend takes ring batches where they lie, in GPU memory); use "
                        "placement: device or auto with --backend gpu");
    if (cfg.real_nic() && where != gpuring::Placement::device)
      throw ConfigError(cfg.nic_where, "gpuring port '" + port->name() + "': nic: a real NIC DMAs into rings in GPU "
                                       "memory: it needs --backend gpu (placement: device or auto)");
    device_rings = device_rings || where == gpuring::Placement::device;
  }
  if (device_rings) gpuring::request_persistent_kernel_environment();
}

void GpuRingFeed::check_run_ends(const RuntimeConfig& rc, double duration_s) {
  if (duration_s > 0) return;
  for (const auto& p : rc.ports)
    if (const auto* port = dynamic_cast<const GpuRingPort*>(p.get()); port && port->config().real_nic())
      throw ConfigError(port->config().nic_where,
                        "gpuring port '" + port->name() + "': nic: a real NIC has no end of input; give the run "
                        "a --duration SECONDS (its rings are then stopped and the NIC detached)");
}

GpuRingFeed::GpuRingFeed(RuntimeConfig& rc, uint16_t port_id, const BatchShape& shape, Backend backend)
    : rc_(rc), port_id_(port_id), port_(dynamic_cast<GpuRingPort&>(*rc.ports[port_id])) {
  check_config(rc, backend);
  const gpuring::GpuRingConfig& cfg = port_.config();
  const std::string where = cfg.where + ": port '" + port_.name() + "'";
  const gpuring::Placement placement = placement_on(port_, backend);
  device_ = placement == gpuring::Placement::device;
  if (!cfg.real_nic()) resolve_endpoints(rc, cfg, where);  // check_config prechecked a real NIC

  rings_ = std::make_unique<gpuring::RingSet>(cfg.rings, placement);
  const gpuring::RingParams& p = rings_->params();
  // A batch may hold at most the slots a ring has beyond those armed in its descriptors.
  const uint32_t capacity = std::min(shape.capacity, p.slots_per_ring - p.ring_size);
  const uint32_t per_ring = std::max<uint32_t>(2, rc.settings.batches / p.rings);
  // The port feeds one chain: its batches close on that chain's deadline.
  const auto fed = std::find_if(rc.chains.begin(), rc.chains.end(),
                                [&](const Chain& c) { return c.from == port_id; });
  const uint32_t deadline_us = fed != rc.chains.end() ? fed->batch_deadline_us : rc.settings.batch_deadline_us;
  batches_ = std::make_unique<gpuring::RingBatches>(*rings_, capacity, per_ring,
                                                    uint64_t(std::max<uint32_t>(1, deadline_us)) * 1000,
                                                    shape.result_stride);
  if (cfg.real_nic()) {
    real_nic_ = gpuring::DpdkNic::attach(cfg, *rings_);
  } else {
    dma_ = device_ ? gpuring::make_device_dma_engine(cfg.dma) : gpuring::make_host_dma_engine();
    gpuring::NicEmulatorConfig nc;
    nc.rate_pps = cfg.rate_pps;
    // burst is per ring, as in gpuring_bench: one step's frames spread over the rings, and a
    // fixed burst over 4 rings made runs of ~8 adjacent slots per copy (the emulator then offered
    // 0.67 Mpps to a chain where one ring took 1.47).
    nc.burst = cfg.burst * p.rings;
    nc.flow_control = cfg.flow_control;
    nic_ = std::make_unique<gpuring::NicEmulator>(*rings_, *source_, sink_, *dma_, nc);
  }
  for (uint32_t i = 0; i < p.rings * per_ring; ++i) {
    // Device placement: the handle holds the pinned host copy of the batch's metadata, in the
    // ring batches' own layout (the GPU stage downloads into it).
    if (device_)
      handles_.push_back(std::make_unique<Batch>(capacity, 64, MemoryKind::host_pinned, shape.result_stride));
    else
      handles_.push_back(std::make_unique<Batch>(1, 64, MemoryKind::host));
  }
  taken_.resize(handles_.size());
  if (device_) {
    const BatchLayout& hl = handles_.front()->layout();
    const BatchLayout& rl = batches_->layout();
    if (hl.bytes != rl.bytes || hl.off_data != rl.off_data || hl.off_seq != rl.off_seq)
      throw std::logic_error("gpuring feed: batch handle and ring batch layouts differ");
    egress_copy_ = std::make_unique<RingEgressCopy>(capacity, p.slot_bytes);
    host_rows_of_.assign(capacity, 0);
    needed_.reserve(capacity);
    if (gpuring::cuda_loads_kernels_lazily())
      throw std::runtime_error(
          "gpuring port '" + port_.name() + "': CUDA loads kernels lazily in this process "
          "(CUDA_MODULE_LOADING), so a chain kernel launched for the first time while the ring kernel "
          "runs could wait for it for ever; set CUDA_MODULE_LOADING=EAGER before CUDA starts");
    clock_ = gpuring::measure_device_ring_clock();  // before any persistent kernel runs
    batches_->set_clock_offsets(clock_.to_monotonic_ns, clock_.to_unix_ns);
  }
}

void GpuRingFeed::resolve_endpoints(RuntimeConfig& rc, const gpuring::GpuRingConfig& cfg, const std::string& where) {
  source_ = port_.inline_source() ? port_.inline_source() : port_named(rc, cfg.source_name);
  if (!source_) throw ConfigError(where, "source: unknown port '" + cfg.source_name + "'");
  if (!source_->has_rx()) throw ConfigError(where, "source: port '" + source_->name() + "' has no rx side");
  if (port_.inline_sink()) sink_ = port_.inline_sink();
  else if (!cfg.sink_name.empty()) {
    sink_ = port_named(rc, cfg.sink_name);
    if (!sink_) throw ConfigError(where, "sink: unknown port '" + cfg.sink_name + "'");
    if (!sink_->has_tx()) throw ConfigError(where, "sink: port '" + sink_->name() + "' has no tx side");
  }
}

GpuRingFeed::~GpuRingFeed() {
  if (device_ && gpu_runner_ && !finished_) stop_device_loops();
  if (runner_ && !finished_) rings_->request_abort();
  runner_.reset();
  if (nic_) {
    try {
      nic_->join();
    } catch (...) {
    }
  }
  gpu_runner_.reset();
  if (watchdog_) watchdog_->disarm();
}

void GpuRingFeed::stop_device_loops() {
  // An error unwinds the run: nobody serves the batches any more, so the loops are aborted as
  // they stand. Freeing memory a running kernel uses would block in cudaFree for ever.
  watchdog_->arm("gpuring teardown", 2 * kAbortWaitS + 10);
  rings_->request_abort();
  if (!gpu_runner_->wait(kAbortWaitS)) watchdog_->fire("the ring kernel did not exit on abort");
  watchdog_->disarm();
}

std::string GpuRingFeed::state() const {
  const std::string nic = nic_ ? fmt::format("NIC rx {} ({})", nic_->rx_finished() ? "finished" : "NOT finished",
                                             nic_->live_state())
                               : real_nic_->describe();
  std::string s = fmt::format("port '{}': {}; {} batches out in the chain; {}", port_.name(), nic,
                              __atomic_load_n(&outstanding_, __ATOMIC_RELAXED), rings_->describe_registers());
  const LateCudaSetup late = late_cuda_setup();
  if (late.calls > late_setup_before_)
    s += fmt::format("; {} CUDA set-up calls since the ring kernel started (first: {})", late.calls - late_setup_before_,
                     late.first);
  return s;
}

void GpuRingFeed::start() {
  started_ = true;
  if (!device_) {
    clock_ = gpuring::host_ring_clock_offsets();
    batches_->set_clock_offsets(clock_.to_monotonic_ns, clock_.to_unix_ns);
    runner_ = std::make_unique<gpuring::HostRingBatchRunner>(*rings_, *batches_, port_id_);
    nic_->start();  // host placement is emulated only (a real NIC needs device rings)
    return;
  }
  watchdog_ = std::make_unique<gpuring::HangWatchdog>([this] { return state(); });
  watchdog_->arm("gpuring ring kernel launch", kLaunchLimitS);
#if GPUNFV_HAVE_CUDA
  // Everything CUDA sets up at a first use, done while it still may synchronize the device
  // (gpu/device_preflight.h); the GPU stage did the same for its own streams and lanes.
  preflight_ = prepare_device_for_persistent_kernels();
#endif
  late_setup_before_ = late_cuda_setup().calls;
  // +1: the ring kernel's own stream, made at its launch.
  streams_ = live_streams() + 1;
  queues_ = cuda_hardware_queues();
  if (streams_ > uint64_t(queues_))
    std::fprintf(stderr,
                 "gpunfv: warning: gpuring port '%s': %llu CUDA streams for %d hardware queues "
                 "(CUDA_DEVICE_MAX_CONNECTIONS): streams share queues, and work queued behind the ring "
                 "kernel in its queue would wait for it for ever\n",
                 port_.name().c_str(), static_cast<unsigned long long>(streams_), queues_);
  gpu_runner_ = gpuring::launch_gpu_ring_batch_runner(*rings_, *batches_, port_id_);
  watchdog_->disarm();
  if (nic_) nic_->start();
}

Batch* GpuRingFeed::take(bool stop_now, bool& finished, uint64_t& bytes) {
  finished = false;
  bytes = 0;
  if (stop_now && !abort_requested_) {
    // The run's time is up while the source may still be sending: the rings stop as they stand
    // (frames still in a ring were never received; the audit counts held slots). Batches rx
    // published before are still taken.
    rings_->request_abort();
    abort_requested_ = stop_requested_ = true;
  }
  gpuring::RingBatches::Ready r;
  bool got = batches_->take_ready(r);
  if (!got) {
    if (!stop_requested_ && nic_ && nic_->rx_finished()) {
      rings_->request_stop();  // the NIC delivered its last frame: rx drains and publishes
      stop_requested_ = true;
    }
    // rx publishes its last batch before it sets done: one more look after seeing done.
    if (!stop_requested_ || !rx_all_done(*rings_)) return nullptr;
    got = batches_->take_ready(r);
    if (!got) {
      finished = true;
      return nullptr;
    }
  }
  const uint32_t h = batches_->view().id(r.ring, r.batch);
  Batch* b = handles_[h].get();
  b->set_count(r.count);
  if (device_) {
    // Host view: the handle's metadata (filled by the GPU stage's download) and the egress
    // copy's rows as packet bytes (filled by prepare_egress); device view: the ring batch.
    BatchView hv = b->layout().view(b->base(), r.count);
    hv.stride = rings_->params().slot_bytes;
    hv.data = IsoSpan<uint8_t>(egress_copy_->host_rows(), egress_copy_->host_bytes());
    hv.slot_index = IsoSpan<uint32_t>(host_rows_of_.data(), host_rows_of_.size());
    b->set_external(hv);
    b->set_device_resident(batches_->batch_view(r));
    b->device_base = batches_->batch_base(r);
    __atomic_add_fetch(&outstanding_, 1, __ATOMIC_RELAXED);
    watchdog_->arm("gpuring batch in the chain", kStallLimitS);
  } else {
    b->set_external(batches_->batch_view(r));
  }
  taken_[h] = r;
  bytes = r.bytes;
  return b;
}

void GpuRingFeed::prepare_egress(Batch& b, const Chain& chain) {
  if (!device_ || !b.device_resident()) return;
  uint32_t frame_nodes = 0;
  for (size_t k = 0; k < chain.path.size(); ++k)
    if (rc_.nfs[chain.path[k]]->collect_reads_frames()) frame_nodes |= 1u << k;
  const BatchView hv = b.view();
  auto reads = [&](uint8_t node, uint32_t i) { return rc_.nfs[chain.path[node]]->collect_reads_frame(hv, i, node); };
  frames_needed_on_host(hv, chain, port_id_, rc_.ports.size(), frame_nodes, reads, needed_);
  for (uint32_t j = 0; j < needed_.size(); ++j) host_rows_of_[needed_[j]] = j;
  copies_.frame_bytes += egress_copy_->fetch(b.device_view(), needed_, hv.len.framework_data());
  copies_.frames += needed_.size();
}

void GpuRingFeed::give_back(Batch* b) {
  for (size_t h = 0; h < handles_.size(); ++h)
    if (handles_[h].get() == b) {
      if (device_) {
        // Egress marked the packets it sent itself or dropped: the tx loop reads the verdicts
        // in device memory. Unchanged (every packet back to the ring, or dropped by an NF), the
        // device's are already right, and the synchronous copy is skipped.
        if (b->verdicts_changed) {
          const ByteRange v = verdict_upload_range(b->layout(), b->count());
          egress_copy_->upload(b->device_base + v.offset, b->base() + v.offset, v.bytes);
          copies_.verdict_bytes += v.bytes;
        }
        if (__atomic_sub_fetch(&outstanding_, 1, __ATOMIC_RELAXED) == 0)
          watchdog_->disarm();
        else
          watchdog_->arm("gpuring batch in the chain", kStallLimitS);
      }
      b->verdicts_changed = false;
      batches_->hand_done(taken_[h]);
      return;
    }
  throw std::logic_error("gpuring feed: a batch that is not one of the ring's");
}

std::string GpuRingFeed::finish(PortCounters& pc) {
  bool drained = true;
  if (device_) {
    watchdog_->arm("gpuring drain", kDrainLimitS + kAbortWaitS + 10);
    if (!gpu_runner_->wait(kDrainLimitS)) {
      // Say what did not finish, then let the loops exit as they stand; the audit below still
      // places every slot (frames left in a ring count as never received).
      std::fprintf(stderr, "gpunfv: gpuring port '%s': the ring kernel did not drain within %.0f s (%s); aborting it\n",
                   port_.name().c_str(), kDrainLimitS, state().c_str());
      rings_->request_abort();
      drained = false;
      if (!gpu_runner_->wait(kAbortWaitS)) watchdog_->fire("the ring kernel did not exit on abort either");
    }
    watchdog_->disarm();
  } else {
    runner_->join();
  }
  finished_ = true;
  if (!nic_) return finish_real_nic(drained);
  nic_->join();
  const gpuring::NicStats& s = nic_->stats();
  const uint64_t nic_drops = s.drops_ring_full + s.drops_oversize;
  pc.rx_packets.fetch_add(nic_drops);
  pc.dropped_total.fetch_add(nic_drops);
  pc.dropped.add(DropReason::nic_rx_ring_full, s.drops_ring_full);
  pc.dropped.add(DropReason::oversize, s.drops_oversize);
  const gpuring::BatchHoldings held = batches_->holdings();
  const gpuring::SlotAudit a = rings_->audit(&held);
  if (!a.ok()) throw std::runtime_error("gpuring port '" + port_.name() + "': slot audit failed: " + a.describe());
  uint64_t batches = 0, by_timeout = 0;
  for (const auto& c : batches_->counters()) {
    batches += c.published;
    by_timeout += c.closed_by_timeout;
  }
  std::string line = fmt::format(
      "gpuring {} ({} rings, placement {}): {} batches ({} closed by timeout), NIC offered {} delivered {} "
      "ring_full {} sent {} sink_errors {}",
      port_.name(), rings_->params().rings, device_ ? "device" : "host", batches, by_timeout, s.offered,
      s.delivered, s.drops_ring_full, s.tx_packets, s.tx_errors);
  if (!s.latency_ns.empty()) {
    // What a tester around the NIC sees for the frames sent back out of the ring: from the
    // emulator taking a frame from the source to its sending it (DMA in and out included).
    std::vector<uint32_t> l = s.latency_ns;
    auto at = [&](double q) {
      const size_t k = std::min(l.size() - 1, size_t(q * double(l.size())));
      std::nth_element(l.begin(), l.begin() + long(k), l.end());
      return l[k] / 1e3;
    };
    const double p50 = at(0.5), p99 = at(0.99);
    line += fmt::format("; NIC in-to-out latency p50 {:.1f} us p99 {:.1f} us", p50, p99);
  }
  // The ring port's own share: rx taking a packet to the tx tail write announcing it, the chain
  // in between, timed by the loops' clock (io/gpuring/ring/gpu_latency.h).
  const gpuring::GpuLatencySummary own = gpuring::summarize_gpu_latency(rings_->snapshot().latency);
  if (own.count)
    line += fmt::format("; rx-to-tx-tail p50 {:.1f} us p99 {:.1f} us over {} frames", own.p50_ns / 1e3,
                        own.p99_ns / 1e3, own.count);
  if (device_) {
    line += fmt::format("; egress copied {} frames ({} B) out of GPU slots, {} B of verdicts back; "
                        "GPU clock mapped to the host's within {:.1f} us{}",
                        copies_.frames, copies_.frame_bytes, copies_.verdict_bytes, clock_.uncertainty_ns / 1e3,
                        drained ? "" : "; drain ABORTED");
    line += fmt::format("; before the ring kernel: {}; {} streams, {} hardware queues", preflight_.line(), streams_,
                        queues_);
    const LateCudaSetup late = late_cuda_setup();
    if (late.calls > late_setup_before_)
      line += fmt::format("; {} CUDA set-up calls while the ring kernel ran (first: {})",
                          late.calls - late_setup_before_, late.first);
  }
  return line + "; slots audited ok";
}

std::string GpuRingFeed::finish_real_nic(bool drained) {
  // The real NIC's own drops (missed packets, per-queue drops) are in its statistics registers,
  // which DPDK's ethdev reads (rte_eth_stats_get); they are not yet added to the port's counters.
  const gpuring::BatchHoldings held = batches_->holdings();
  const gpuring::SlotAudit a = rings_->audit(&held);
  if (!a.ok()) throw std::runtime_error("gpuring port '" + port_.name() + "': slot audit failed: " + a.describe());
  uint64_t batches = 0;
  for (const auto& c : batches_->counters()) batches += c.published;
  return fmt::format("gpuring {} ({} rings, placement device): {} batches; {}{}; slots audited ok", port_.name(),
                     rings_->params().rings, batches, real_nic_->describe(), drained ? "" : "; drain ABORTED");
}

}  // namespace gpunfv
