#include "chain/metrics_snapshot.h"

namespace gpunfv {

namespace {

template <typename T>
T value_or(const nlohmann::json& j, const char* key, T dflt) {
  return j.contains(key) && !j[key].is_null() ? j[key].get<T>() : dflt;
}

// The chain's stages as collect_chain_metrics() reported them: stage 0 (entering the chain)
// gives the chain's batches, each NF node a StageSample; the GPU's download stage has no NF.
void add_chain(MetricsSnapshot& m, const nlohmann::json& cj, const LatencyHistogram& latency) {
  ChainSample c;
  c.name = cj.value("name", "");
  c.latency = latency;
  c.planned_batch = value_or<uint32_t>(cj, "planned_batch", 0);
  const nlohmann::json stages = cj.value("stages", nlohmann::json::array());
  for (size_t k = 0; k < stages.size(); ++k) {
    const nlohmann::json& st = stages[k];
    if (k == 0) {
      c.batches = value_or<uint64_t>(st, "batches", 0);
      c.packets = value_or<uint64_t>(st, "packets", 0);
    }
    if (value_or<std::string>(st, "nf", "").empty()) continue;
    StageSample s;
    s.chain = c.name;
    s.nf = st["nf"].get<std::string>();
    s.batches = value_or<uint64_t>(st, "batches", 0);
    s.launches = value_or<uint64_t>(st, "launches", 0);
    s.packets = value_or<uint64_t>(st, "packets", 0);
    s.max_queued_packets = value_or<uint64_t>(st, "max_queued_packets", 0);
    s.queued_packet_seconds = value_or<double>(st, "queued_packet_seconds", 0);
    s.slowed_s = value_or<double>(st, "slowed_s", 0);
    s.slow_down_signals = value_or<uint64_t>(st, "slow_down_signals", 0);
    s.busy_s = value_or<double>(st, "busy_s", 0);
    s.sm_share = value_or<double>(st, "sm_share", -1);
    m.stages.push_back(std::move(s));
  }
  m.chains.push_back(std::move(c));
}

}  // namespace

MetricsSnapshot metrics_from_stats(const RunStats& s) {
  MetricsSnapshot m;
  m.finished = true;
  m.elapsed_s = s.elapsed_s;
  m.backend = s.backend;
  m.config = s.config_file;
  if (s.scheduler.is_object()) m.scheduler = value_or<std::string>(s.scheduler, "policy", "");
  m.latency = s.latency;
  for (const auto& p : s.ports) {
    PortSample ps;
    ps.name = p->name;
    ps.rx_packets = p->rx_packets.load();
    ps.rx_bytes = p->rx_bytes.load();
    ps.tx_packets = p->tx_packets.load();
    ps.tx_bytes = p->tx_bytes.load();
    ps.rx_bytes_counted = p->rx_bytes_counted.load();
    ps.tx_bytes_counted = p->tx_bytes_counted.load();
    ps.forwarded = p->forwarded.load();
    ps.drops = p->dropped;
    ps.dropped = p->dropped.total();
    m.ports.push_back(std::move(ps));
  }
  for (size_t i = 0; i < s.nfs.size(); ++i) {
    const NfCounters& n = s.nfs[i];
    NfSample ns{n.name, n.type, n.in, n.out, n.drops, n.in_bytes, n.out_bytes};
    if (i < s.nf_reports.size() && s.nf_reports[i].contains("table_version"))
      ns.table_version = s.nf_reports[i]["table_version"].get<int64_t>();
    m.nfs.push_back(std::move(ns));
  }
  for (size_t c = 0; c < s.chains.size(); ++c)
    add_chain(m, s.chains[c], c < s.chain_latency.size() ? s.chain_latency[c] : LatencyHistogram{});
  return m;
}

}  // namespace gpunfv
