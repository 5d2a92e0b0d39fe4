#include "chain/live_metrics.h"

#include "core/clock.h"
#include "nf/table_versions.h"

namespace gpunfv {

namespace {

void add_ports(MetricsSnapshot& m, const RunStats& stats, const Egress::Live& eg) {
  for (size_t i = 0; i < stats.ports.size(); ++i) {
    const PortCounters& p = *stats.ports[i];
    PortSample ps;
    ps.name = p.name;
    ps.rx_packets = p.rx_packets.load(std::memory_order_relaxed);
    ps.rx_bytes = p.rx_bytes.load(std::memory_order_relaxed);
    ps.tx_packets = p.tx_packets.load(std::memory_order_relaxed);
    ps.tx_bytes = p.tx_bytes.load(std::memory_order_relaxed);
    ps.rx_bytes_counted = p.rx_bytes_counted.load(std::memory_order_relaxed);
    ps.tx_bytes_counted = p.tx_bytes_counted.load(std::memory_order_relaxed);
    ps.forwarded = p.forwarded.load(std::memory_order_relaxed);
    ps.dropped = p.dropped_total.load(std::memory_order_relaxed);
    if (i < eg.port_drops.size()) ps.drops = eg.port_drops[i];
    ps.drops.add(DropReason::ingress_backpressure, p.rx_queue_drops.load(std::memory_order_relaxed));
    m.ports.push_back(std::move(ps));
  }
}

void add_chain(MetricsSnapshot& m, const LiveParts& p, size_t c, const Egress::Live& eg,
               const std::vector<std::vector<double>>& shares, uint64_t now) {
  const Chain& chain = p.rc.chains[c];
  ChainSample cs;
  cs.name = chain.name;
  if (c < eg.chain_latency.size()) cs.latency = eg.chain_latency[c];
  if (!shares.empty()) {  // a GPU sharing plan: its batch, or batch_size where it sets none
    cs.planned_batch = p.stage.ingress_batch(static_cast<uint16_t>(c));
    if (!cs.planned_batch) cs.planned_batch = p.rc.settings.batch_size;
  }
  cs.ingress_paused = p.stage.ingress_paused(static_cast<uint16_t>(c));
  const ChainFlow* flow = p.stage.flow(static_cast<uint16_t>(c));
  const std::vector<StageMetrics> sm = flow ? flow->metrics(now) : std::vector<StageMetrics>{};
  if (!sm.empty()) {
    cs.batches = sm[0].batches;
    cs.packets = sm[0].packets;
  }
  for (size_t k = 0; k < chain.path.size(); ++k) {
    StageSample s;
    s.chain = chain.name;
    s.nf = p.rc.nfs[chain.path[k]]->name();
    if (k + 1 < sm.size()) {
      const StageMetrics& x = sm[k + 1];
      s.batches = x.batches;
      s.launches = x.launches;
      s.packets = x.packets;
      s.max_queued_packets = x.max_queued_packets;
      s.queued_packet_seconds = x.queued_packet_seconds;
      s.slowed_s = x.slowed_ns * 1e-9;
      s.slow_down_signals = x.slow_down_signals;
      s.busy_s = x.busy_ns * 1e-9;
      s.queued_packets = flow->queued_packets(k + 1);
      s.slowed = flow->stage_slowed(k + 1);
    }
    if (c < shares.size() && k < shares[c].size()) s.sm_share = shares[c][k];
    m.stages.push_back(std::move(s));
  }
  m.chains.push_back(std::move(cs));
}

}  // namespace

MetricsSnapshot live_metrics(const LiveParts& p) {
  const uint64_t now = monotonic_ns();
  MetricsSnapshot m;
  m.elapsed_s = (now - p.t0_ns) * 1e-9;
  m.backend = p.backend == Backend::gpu ? "gpu" : "cpu";
  m.config = p.rc.file;
  const std::vector<std::vector<double>> shares = p.stage.sm_shares();
  if (p.backend == Backend::gpu) m.scheduler = p.rc.settings.scheduler;
  const Egress::Live eg = p.egress.live();
  add_ports(m, p.stats, eg);
  for (size_t n = 0; n < p.rc.nfs.size(); ++n) {
    NfSample ns{p.rc.nfs[n]->name(), std::string(p.rc.nfs[n]->type()), 0, 0, {}};
    if (n < eg.nfs.size()) {
      const NfCounters& c = eg.nfs[n];
      ns.in = c.in, ns.out = c.out, ns.drops = c.drops, ns.in_bytes = c.in_bytes, ns.out_bytes = c.out_bytes;
    }
    if (const TableVersionLog* v = p.rc.nfs[n]->table_versions()) ns.table_version = int64_t(v->latest());
    m.nfs.push_back(std::move(ns));
  }
  for (size_t c = 0; c < p.rc.chains.size(); ++c) {
    add_chain(m, p, c, eg, shares, now);
    m.latency.merge(m.chains.back().latency);
  }
  return m;
}

}  // namespace gpunfv
