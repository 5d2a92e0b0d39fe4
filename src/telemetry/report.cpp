#include "telemetry/report.h"

#include <fmt/format.h>

namespace gpunfv {

namespace {

std::string si(double v, const char* unit) {
  if (v >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  if (v >= 1e6) return fmt::format("{:.2f} M{}", v / 1e6, unit);
  if (v >= 1e3) return fmt::format("{:.2f} k{}", v / 1e3, unit);
  return fmt::format("{:.0f} {}", v, unit);
}

nlohmann::json drops_json(const DropCounts& d) {
  nlohmann::json j = nlohmann::json::object();
  for (int r = 0; r < kMaxDropReasons; ++r)
    if (d.by_reason[r]) j[std::string(drop_reason_name(static_cast<DropReason>(r)))] = d.by_reason[r];
  return j;
}

// One line per chain: its rx-to-tx quantiles against its latency bound.
std::string chain_latency_lines(const RunStats& s) {
  std::string out;
  for (const auto& c : s.chains) {
    if (!c.contains("latency_ns")) continue;
    const auto& l = c["latency_ns"];
    const auto& held = c["bound_held"];
    out += fmt::format("{}chain {}: latency p50 {:.1f} us, p99 {:.1f} us, p999 {:.1f} us; bound {:g} us {}\n",
                       out.empty() ? "\n" : "", c["name"].get<std::string>(),
                       l["p50"].get<uint64_t>() / 1e3, l["p99"].get<uint64_t>() / 1e3,
                       l["p999"].get<uint64_t>() / 1e3, c["latency_bound_us"].get<double>(),
                       held.is_null() ? "(no packet timed)" : held.get<bool>() ? "held" : "MISSED");
  }
  return out;
}

}  // namespace

std::string format_progress(const ProgressSample& s) {
  return fmt::format("[{:7.1f}s] rx {:>11} {:>12} | tx {:>11} {:>12} | dropped {} | batches in flight {}/{}{}{}\n",
                     s.elapsed_s, si(s.rx_pps, "pps"), s.rx_bytes_counted ? si(s.rx_bps, "bit/s") : "- bit/s",
                     si(s.tx_pps, "pps"), s.tx_bytes_counted ? si(s.tx_bps, "bit/s") : "- bit/s", s.dropped_total, s.in_flight, s.batches,
                     s.detail.empty() ? "" : " | ", s.detail);
}

std::string summary_table(const RunStats& s) {
  std::string out;
  double t = s.elapsed_s > 0 ? s.elapsed_s : 1e-9;
  out += fmt::format("\ngpunfv summary: {} backend ({}), {:.3f} s\n\n", s.backend, s.backend_detail,
                     s.elapsed_s);
  out += fmt::format("{:<12} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10}\n", "port", "rx pkts",
                     "rx bytes", "tx pkts", "tx bytes", "forwarded", "dropped");
  // Bytes a forward did not count (count_bytes: off) print as "-".
  auto bytes = [](const std::atomic<uint64_t>& n, const std::atomic<bool>& counted) {
    return counted ? fmt::format("{}", n.load()) : std::string("-");
  };
  bool bytes_off = false;
  for (const auto& p : s.ports) {
    out += fmt::format("{:<12} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10}\n", p->name,
                       p->rx_packets.load(), bytes(p->rx_bytes, p->rx_bytes_counted), p->tx_packets.load(),
                       bytes(p->tx_bytes, p->tx_bytes_counted), p->forwarded.load(), p->dropped.total());
    bytes_off |= !p->rx_bytes_counted || !p->tx_bytes_counted;
  }
  if (bytes_off) out += "(-: bytes not counted, a forward with count_bytes: off)\n";
  if (!s.nfs.empty()) {
    out += fmt::format("\n{:<12} {:<10} {:>12} {:>12} {:>10}  {}\n", "nf", "type", "in", "out",
                       "drops", "drop reasons");
    for (const auto& n : s.nfs) {
      std::string reasons;
      for (int r = 0; r < kMaxDropReasons; ++r)
        if (n.drops.by_reason[r])
          reasons += fmt::format("{}{}={}", reasons.empty() ? "" : " ",
                                 drop_reason_name(static_cast<DropReason>(r)), n.drops.by_reason[r]);
      out += fmt::format("{:<12} {:<10} {:>12} {:>12} {:>10}  {}\n", n.name, n.type, n.in, n.out,
                         n.drops.total(), reasons);
    }
    for (size_t i = 0; i < s.nfs.size() && i < s.nf_reports.size(); ++i)
      if (s.nf_reports[i].value("quarantined", false))
        out += fmt::format("quarantined: {} reached outside its memory; later packets to it were "
                           "dropped (nf_isolation_fault)\n", s.nfs[i].name);
    for (const auto& [name, p] : s.processes.items())
      out += fmt::format("NF process {}: pid {}, restarts {}{}\n", name, p.value("pid", -1),
                         p.value("restarts", 0),
                         p.value("hung", 0) ? fmt::format(" ({} after it hung)", p.value("hung", 0)) : "");
  }
  out += chain_latency_lines(s);
  for (const auto& c : s.chains) {
    if (!c.contains("stages") || c["stages"].size() < 2) continue;
    out += fmt::format("\nchain {} (backpressure {}{}): per NF queue\n", c["name"].get<std::string>(),
                       c["backpressure"].get<bool>() ? "on, qt " : "off",
                       c["backpressure"].get<bool>() ? fmt::format("{:.1f}", c["qt"].get<double>()) : "");
    out += fmt::format("  {:<12} {:>10} {:>12} {:>12} {:>12} {:>10} {:>12} {:>10}\n", "nf", "launches",
                       "packets", "mean queue", "max queue", "slowed s", "queue drops", "GPU busy s");
    for (const auto& st : c["stages"]) {
      if (st["nf"].get<std::string>().empty()) continue;
      out += fmt::format("  {:<12} {:>10} {:>12} {:>12.0f} {:>12} {:>10.3f} {:>12} {:>10.3f}\n",
                         st["nf"].get<std::string>(), st["launches"].get<uint64_t>(),
                         st["packets"].get<uint64_t>(), st["mean_queued_packets"].get<double>(),
                         st["max_queued_packets"].get<uint64_t>(), st["slowed_s"].get<double>(),
                         st["queue_full_drops"].get<uint64_t>(), st.value("busy_s", 0.0));
    }
  }
  if (s.scheduler.is_object() && s.scheduler.contains("line"))
    out += fmt::format("\nscheduler: {}\n", s.scheduler["line"].get<std::string>());
  DropCounts ingress;  // drops outside any NF: classify and egress
  for (const auto& p : s.ports) {
    for (int r = 0; r < kMaxDropReasons; ++r) ingress.by_reason[r] += p->dropped.by_reason[r];
  }
  for (const auto& n : s.nfs)
    for (int r = 0; r < kMaxDropReasons; ++r) ingress.by_reason[r] -= n.drops.by_reason[r];
  if (ingress.total()) {
    out += "\ndropped outside NFs (parse, size, egress):";
    for (int r = 0; r < kMaxDropReasons; ++r)
      if (ingress.by_reason[r])
        out += fmt::format(" {}={}", drop_reason_name(static_cast<DropReason>(r)), ingress.by_reason[r]);
    out += "\n";
  }
  uint64_t rx = s.total_rx(), tx = s.total_tx();
  uint64_t rxb = 0, txb = 0;
  bool rxb_counted = true, txb_counted = true;
  for (const auto& p : s.ports) {
    rxb += p->rx_bytes, txb += p->tx_bytes;
    rxb_counted &= p->rx_bytes_counted, txb_counted &= p->tx_bytes_counted;
  }
  out += fmt::format("\ntotal: rx {} pkts ({}, {}), tx {} pkts ({}, {}), dropped {}\n", rx,
                     si(rx / t, "pps"), rxb_counted ? si(rxb * 8 / t, "bit/s") : "bytes not counted",
                     tx, si(tx / t, "pps"), txb_counted ? si(txb * 8 / t, "bit/s") : "bytes not counted",
                     s.total_dropped());
  out += fmt::format("latency rx->tx: p50 {} ns, p99 {} ns, max {} ns ({} packets{})\n",
                     s.latency.quantile(0.5), s.latency.quantile(0.99), s.latency.max(),
                     s.latency.count(),
                     s.latency_untimed ? fmt::format("; {} sent untimed by sampled forwards", s.latency_untimed) : "");
  std::string acct = s.accounting_errors();
  out += acct.empty() ? "accounting: every packet transmitted or dropped with a reason\n"
                      : "ACCOUNTING MISMATCH:\n" + acct;
  return out;
}

nlohmann::json latency_buckets_json(const LatencyHistogram& h) {
  nlohmann::json out = nlohmann::json::array();
  for (int b = 0; b < LatencyHistogram::kBuckets; ++b)
    if (h.bucket(b)) out.push_back({LatencyHistogram::bucket_upper(b), h.bucket(b)});
  return out;
}

nlohmann::json report_json(const RunStats& s) {
  nlohmann::json j;
  j["config"] = s.config_file;
  j["backend"] = s.backend;
  j["backend_detail"] = s.backend_detail;
  j["elapsed_s"] = s.elapsed_s;
  j["ports"] = nlohmann::json::object();
  for (const auto& p : s.ports) {
    // Bytes not counted (count_bytes: off) are null.
    auto bytes = [](const std::atomic<uint64_t>& n, const std::atomic<bool>& counted) {
      return counted ? nlohmann::json(n.load()) : nlohmann::json();
    };
    j["ports"][p->name] = {{"rx_packets", p->rx_packets.load()}, {"tx_packets", p->tx_packets.load()},
                           {"rx_bytes", bytes(p->rx_bytes, p->rx_bytes_counted)},
                           {"tx_bytes", bytes(p->tx_bytes, p->tx_bytes_counted)},
                           {"forwarded", p->forwarded.load()},   {"dropped", p->dropped.total()},
                           {"drops", drops_json(p->dropped)}};
  }
  j["nfs"] = nlohmann::json::object();
  for (size_t i = 0; i < s.nfs.size(); ++i) {
    const NfCounters& n = s.nfs[i];
    nlohmann::json nj = {{"type", n.type},         {"in", n.in},
                         {"out", n.out},           {"in_bytes", n.in_bytes},
                         {"out_bytes", n.out_bytes}, {"drops", drops_json(n.drops)}};
    if (i < s.nf_reports.size() && s.nf_reports[i].is_object()) nj.update(s.nf_reports[i]);
    j["nfs"][n.name] = nj;
  }
  if (!s.forward_reports.empty()) j["forwards"] = s.forward_reports;
  if (!s.processes.empty()) j["processes"] = s.processes;
  j["latency_ns"] = {{"p50", s.latency.quantile(0.5)},
                     {"p99", s.latency.quantile(0.99)},
                     {"max", s.latency.max()},
                     {"count", s.latency.count()},
                     {"untimed", s.latency_untimed}};  // count + untimed = packets sent
  nlohmann::json cdf = nlohmann::json::array();  // (quantile, ns) for latency CDF plots
  for (double q : {0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999})
    cdf.push_back({q, s.latency.quantile(q)});
  j["latency_ns"]["cdf"] = cdf;
  j["latency_ns"]["sum"] = s.latency.sum();
  j["latency_ns"]["buckets"] = latency_buckets_json(s.latency);
  j["chains"] = s.chains;
  if (!s.scheduler.is_null()) j["scheduler"] = s.scheduler;
  if (!s.egress.is_null()) j["egress"] = s.egress;
  if (!s.timeseries.is_null()) j["timeseries"] = s.timeseries;
  j["totals"] = {{"rx_packets", s.total_rx()}, {"tx_packets", s.total_tx()},
                 {"dropped", s.total_dropped()}};
  j["accounting_ok"] = s.accounting_errors().empty();
  return j;
}

}  // namespace gpunfv
