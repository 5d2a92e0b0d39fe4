#include "telemetry/prometheus_text.h"

#include <fmt/format.h>

#include <functional>

namespace gpunfv {

namespace {

// Label values escape backslash, double quote and newline (the exposition format's rule).
std::string esc(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

class Writer {
 public:
  // A metric family: its HELP and TYPE lines, written once before its first sample.
  void family(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const std::string& name, const std::string& labels, double v) {
    out_ += labels.empty() ? fmt::format("{} {}\n", name, v) : fmt::format("{}{{{}}} {}\n", name, labels, v);
  }
  void sample(const std::string& name, const std::string& labels, uint64_t v) {
    out_ += labels.empty() ? fmt::format("{} {}\n", name, v) : fmt::format("{}{{{}}} {}\n", name, labels, v);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(const char* k, const std::string& v) { return fmt::format("{}=\"{}\"", k, esc(v)); }
std::string labels(const char* k1, const std::string& v1, const char* k2, const std::string& v2) {
  return label(k1, v1) + "," + label(k2, v2);
}

void histogram(Writer& w, const char* name, const std::string& labels, const LatencyHistogram& h) {
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cum = 0;
  int b = 0;
  for (uint64_t bound : prometheus_latency_bounds_ns()) {
    for (; b < LatencyHistogram::kBuckets && LatencyHistogram::bucket_upper(b) <= bound; ++b) cum += h.bucket(b);
    w.sample(fmt::format("{}_bucket", name), fmt::format("{}{}le=\"{}\"", labels, sep, bound / 1e9), cum);
  }
  w.sample(fmt::format("{}_bucket", name), fmt::format("{}{}le=\"+Inf\"", labels, sep), h.count());
  w.sample(fmt::format("{}_sum", name), labels, h.sum() / 1e9);
  w.sample(fmt::format("{}_count", name), labels, h.count());
}

void drops(Writer& w, const char* name, const char* who, const std::string& whose, const DropCounts& d) {
  for (int r = 0; r < kMaxDropReasons; ++r)
    if (d.by_reason[r])
      w.sample(name, labels(who, whose, "reason", std::string(drop_reason_name(static_cast<DropReason>(r)))),
               d.by_reason[r]);
}

void ports(Writer& w, const MetricsSnapshot& m) {
  using Get = std::function<uint64_t(const PortSample&)>;
  auto each = [&](const char* name, const char* help, const Get& get,
                  const std::function<bool(const PortSample&)>& shown = nullptr) {
    w.family(name, "counter", help);
    for (const PortSample& p : m.ports)
      if (!shown || shown(p)) w.sample(name, label("port", p.name), get(p));
  };
  each("gpunfv_port_rx_packets_total", "Packets received on the port.", [](auto& p) { return p.rx_packets; });
  each("gpunfv_port_rx_bytes_total", "Bytes received on the port (absent where not counted).",
       [](auto& p) { return p.rx_bytes; }, [](auto& p) { return p.rx_bytes_counted; });
  each("gpunfv_port_tx_packets_total", "Packets transmitted on the port.", [](auto& p) { return p.tx_packets; });
  each("gpunfv_port_tx_bytes_total", "Bytes transmitted on the port (absent where not counted).",
       [](auto& p) { return p.tx_bytes; }, [](auto& p) { return p.tx_bytes_counted; });
  each("gpunfv_port_forwarded_packets_total", "Packets received on the port and transmitted on some port.",
       [](auto& p) { return p.forwarded; });
  each("gpunfv_port_dropped_packets_total", "Packets received on the port and dropped, all reasons.",
       [](auto& p) { return p.dropped; });
  w.family("gpunfv_port_drops_total", "counter", "Packets received on the port and dropped, by reason.");
  for (const PortSample& p : m.ports) drops(w, "gpunfv_port_drops_total", "port", p.name, p.drops);
}

void nfs(Writer& w, const MetricsSnapshot& m) {
  w.family("gpunfv_nf_in_packets_total", "counter", "Packets sent to the NF.");
  for (const NfSample& n : m.nfs) w.sample("gpunfv_nf_in_packets_total", labels("nf", n.name, "type", n.type), n.in);
  w.family("gpunfv_nf_out_packets_total", "counter", "Packets the NF passed on.");
  for (const NfSample& n : m.nfs) w.sample("gpunfv_nf_out_packets_total", labels("nf", n.name, "type", n.type), n.out);
  w.family("gpunfv_nf_in_bytes_total", "counter", "Frame bytes of the packets sent to the NF.");
  for (const NfSample& n : m.nfs) w.sample("gpunfv_nf_in_bytes_total", labels("nf", n.name, "type", n.type), n.in_bytes);
  w.family("gpunfv_nf_out_bytes_total", "counter", "Frame bytes of the packets the NF passed on.");
  for (const NfSample& n : m.nfs) w.sample("gpunfv_nf_out_bytes_total", labels("nf", n.name, "type", n.type), n.out_bytes);
  w.family("gpunfv_nf_drops_total", "counter", "Packets the NF dropped, by reason.");
  for (const NfSample& n : m.nfs) drops(w, "gpunfv_nf_drops_total", "nf", n.name, n.drops);
  bool any_table = false;
  for (const NfSample& n : m.nfs) any_table = any_table || n.table_version >= 0;
  if (!any_table) return;
  w.family("gpunfv_nf_table_version", "gauge",
           "The version of the NF's live table; each route or rule update makes one.");
  for (const NfSample& n : m.nfs)
    if (n.table_version >= 0)
      w.sample("gpunfv_nf_table_version", labels("nf", n.name, "type", n.type), uint64_t(n.table_version));
}

void stages(Writer& w, const MetricsSnapshot& m) {
  auto lbl = [](const StageSample& s) { return labels("chain", s.chain, "nf", s.nf); };
  auto counter = [&](const char* name, const char* help, auto get) {
    w.family(name, "counter", help);
    for (const StageSample& s : m.stages) w.sample(name, lbl(s), get(s));
  };
  auto gauge = [&](const char* name, const char* help, auto get) {
    w.family(name, "gauge", help);
    for (const StageSample& s : m.stages) w.sample(name, lbl(s), get(s));
  };
  gauge("gpunfv_nf_queue_packets", "Packets waiting in the NF's input queue now.",
        [](auto& s) { return s.queued_packets; });
  gauge("gpunfv_nf_queue_max_packets", "Most packets ever waiting in the NF's input queue.",
        [](auto& s) { return s.max_queued_packets; });
  counter("gpunfv_nf_queue_packet_seconds_total",
          "Queue occupancy integrated over time; its rate is the mean occupancy.",
          [](auto& s) { return s.queued_packet_seconds; });
  counter("gpunfv_nf_batches_total", "Batches that crossed the NF's stage.", [](auto& s) { return s.batches; });
  counter("gpunfv_nf_launches_total", "Batches the NF ran on (some packet sent to it).",
          [](auto& s) { return s.launches; });
  gauge("gpunfv_nf_backpressure_slowed", "1 while backpressure holds the NF's stage off.",
        [](auto& s) { return uint64_t(s.slowed); });
  counter("gpunfv_nf_backpressure_slowed_seconds_total", "Time backpressure held the NF's stage off.",
          [](auto& s) { return s.slowed_s; });
  counter("gpunfv_nf_backpressure_signals_total", "Slow-down signals the stage received.",
          [](auto& s) { return s.slow_down_signals; });
  counter("gpunfv_nf_gpu_busy_seconds_total",
          "Time the NF's GPU stream was busy; its rate is the NF's GPU busy share (0 on the CPU).",
          [](auto& s) { return s.busy_s; });
  w.family("gpunfv_scheduler_sm_share", "gauge", "Share of the GPU's SMs the NF's partition may use (GPU sharing policy).");
  for (const StageSample& s : m.stages)
    if (s.sm_share >= 0) w.sample("gpunfv_scheduler_sm_share", lbl(s), s.sm_share);
}

void chains(Writer& w, const MetricsSnapshot& m) {
  w.family("gpunfv_chain_batches_total", "counter", "Batches that entered the chain.");
  for (const ChainSample& c : m.chains) w.sample("gpunfv_chain_batches_total", label("chain", c.name), c.batches);
  w.family("gpunfv_chain_batch_packets_total", "counter",
           "Packets in the batches that entered the chain; over batches, the mean batch size.");
  for (const ChainSample& c : m.chains) w.sample("gpunfv_chain_batch_packets_total", label("chain", c.name), c.packets);
  w.family("gpunfv_chain_ingress_paused", "gauge", "1 while backpressure holds the chain's ingress port off.");
  for (const ChainSample& c : m.chains)
    w.sample("gpunfv_chain_ingress_paused", label("chain", c.name), uint64_t(c.ingress_paused));
  w.family("gpunfv_scheduler_batch_packets", "gauge", "The GPU sharing plan's ingress batch size for the chain.");
  for (const ChainSample& c : m.chains)
    if (c.planned_batch) w.sample("gpunfv_scheduler_batch_packets", label("chain", c.name), uint64_t(c.planned_batch));
  w.family("gpunfv_chain_latency_seconds", "histogram", "Time from rx to tx of the chain's transmitted packets.");
  for (const ChainSample& c : m.chains) histogram(w, "gpunfv_chain_latency_seconds", label("chain", c.name), c.latency);
}

}  // namespace

const std::vector<uint64_t>& prometheus_latency_bounds_ns() {
  static const std::vector<uint64_t> bounds = [] {
    std::vector<uint64_t> b;
    for (int k = 10; k <= 36; ++k) {
      b.push_back((uint64_t(1) << k) - 1);
      if (k < 36) b.push_back(3 * (uint64_t(1) << (k - 1)) - 1);
    }
    return b;
  }();
  return bounds;
}

std::string prometheus_text(const MetricsSnapshot& m) {
  Writer w;
  w.family("gpunfv_info", "gauge", "The run: configuration, backend and GPU sharing policy.");
  w.sample("gpunfv_info", label("config", m.config) + "," + label("backend", m.backend) + "," +
                              label("scheduler", m.scheduler), uint64_t(1));
  w.family("gpunfv_run_finished", "gauge", "1 once the run has ended: every value is final, as in the JSON report.");
  w.sample("gpunfv_run_finished", "", uint64_t(m.finished));
  w.family("gpunfv_run_elapsed_seconds", "gauge", "Time since the run started (its length once finished).");
  w.sample("gpunfv_run_elapsed_seconds", "", m.elapsed_s);
  ports(w, m);
  nfs(w, m);
  stages(w, m);
  chains(w, m);
  w.family("gpunfv_latency_seconds", "histogram", "Time from rx to tx of every transmitted packet (chains and forwards).");
  histogram(w, "gpunfv_latency_seconds", "", m.latency);
  return w.take();
}

}  // namespace gpunfv
