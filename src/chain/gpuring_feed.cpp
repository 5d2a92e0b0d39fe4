#include "chain/gpuring_feed.h"

#include <fmt/core.h>

#include <stdexcept>

#include "core/error.h"
#include "io/gpuring/gpuring_port.h"

namespace gpunfv {

namespace {

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

GpuRingFeed::GpuRingFeed(RuntimeConfig& rc, uint16_t port_id, const BatchShape& shape,
                         Backend backend)
    : rc_(rc), port_id_(port_id), port_(dynamic_cast<GpuRingPort&>(*rc.ports[port_id])) {
  const gpuring::GpuRingConfig& cfg = port_.config();
  const std::string where = rc.file + ": port '" + port_.name() + "'";
  if (backend != Backend::cpu || cfg.placement != gpuring::Placement::host)
    throw ConfigError(where, "a gpuring port feeding a chain runs with placement: host on the CPU "
                             "backend so far; the GPU backend (placement: device) is not wired to "
                             "the chain executor yet (bench/gpuring_bench runs device rings)");
  source_ = port_.inline_source() ? port_.inline_source() : port_named(rc, cfg.source_name);
  if (!source_) throw ConfigError(where, "source: unknown port '" + cfg.source_name + "'");
  if (!source_->has_rx()) throw ConfigError(where, "source: port '" + source_->name() + "' has no rx side");
  if (port_.inline_sink()) sink_ = port_.inline_sink();
  else if (!cfg.sink_name.empty()) {
    sink_ = port_named(rc, cfg.sink_name);
    if (!sink_) throw ConfigError(where, "sink: unknown port '" + cfg.sink_name + "'");
    if (!sink_->has_tx()) throw ConfigError(where, "sink: port '" + sink_->name() + "' has no tx side");
  }

  rings_ = std::make_unique<gpuring::RingSet>(cfg.rings, cfg.placement);
  const gpuring::RingParams& p = rings_->params();
  // A batch may hold at most the slots a ring has beyond those armed in its descriptors.
  const uint32_t capacity = std::min(shape.capacity, p.slots_per_ring - p.ring_size);
  const uint32_t per_ring = std::max<uint32_t>(2, rc.settings.batches / p.rings);
  batches_ = std::make_unique<gpuring::RingBatches>(
      *rings_, capacity, per_ring, uint64_t(rc.settings.batch_timeout_us) * 1000, shape.result_stride);
  dma_ = gpuring::make_host_dma_engine();
  gpuring::NicEmulatorConfig nc;
  nc.rate_pps = cfg.rate_pps;
  nc.burst = cfg.burst;
  nc.flow_control = cfg.flow_control;
  nic_ = std::make_unique<gpuring::NicEmulator>(*rings_, *source_, sink_, *dma_, nc);
  for (uint32_t i = 0; i < p.rings * per_ring; ++i) handles_.push_back(std::make_unique<Batch>(1, 64, MemoryKind::host));
  taken_.resize(handles_.size());
}

GpuRingFeed::~GpuRingFeed() {
  if (runner_ && !finished_) rings_->request_abort();
  runner_.reset();
  if (nic_) {
    try {
      nic_->join();
    } catch (...) {
    }
  }
}

void GpuRingFeed::start() {
  runner_ = std::make_unique<gpuring::HostRingBatchRunner>(*rings_, *batches_, port_id_);
  nic_->start();
}

Batch* GpuRingFeed::take(bool stop_now, bool& finished) {
  finished = false;
  gpuring::RingBatches::Ready r;
  bool got = batches_->take_ready(r);
  if (!got) {
    if (stop_now && !abort_requested_) {
      // The run's time is up while the source may still be sending: the rings stop as they
      // stand (frames still in a ring were never received; the audit counts held slots).
      rings_->request_abort();
      abort_requested_ = stop_requested_ = true;
    } else if (!stop_requested_ && nic_->rx_finished()) {
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
  b->set_external(batches_->batch_view(r));
  b->set_count(r.count);
  taken_[h] = r;
  return b;
}

void GpuRingFeed::give_back(Batch* b) {
  for (size_t h = 0; h < handles_.size(); ++h)
    if (handles_[h].get() == b) {
      batches_->hand_done(taken_[h]);
      return;
    }
  throw std::logic_error("gpuring feed: a batch that is not one of the ring's");
}

std::string GpuRingFeed::finish(PortCounters& pc) {
  runner_->join();
  nic_->join();
  finished_ = true;
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
  return fmt::format("gpuring {}: {} rings, {} batches ({} closed by timeout), NIC offered {} delivered {} "
                     "ring_full {} sent {} sink_errors {}; slots audited ok",
                     port_.name(), rings_->params().rings, batches, by_timeout, s.offered, s.delivered,
                     s.drops_ring_full, s.tx_packets, s.tx_errors);
}

}  // namespace gpunfv
