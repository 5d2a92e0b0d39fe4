#include "chain/timeseries.h"

namespace gpunfv {

namespace {

std::string stage_key(const StageSample& s) { return s.chain + "/" + s.nf; }

}  // namespace

// One column per figure; values() must list them in the same order.
void TimeSeries::make_columns(const MetricsSnapshot& m) {
  auto col = [&](const char* group, const std::string& name, const char* field, Kind k = Kind::sum) {
    columns_.push_back({group, name, field, k});
  };
  for (const PortSample& p : m.ports)
    for (const char* f : {"rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "dropped"}) col("ports", p.name, f);
  for (const NfSample& n : m.nfs)
    for (const char* f : {"in", "drops", "in_bytes", "out_bytes"}) col("nfs", n.name, f);
  for (const ChainSample& c : m.chains) {
    col("chains", c.name, "batches");
    col("chains", c.name, "batch_packets");
    if (!m.scheduler.empty()) col("chains", c.name, "planned_batch", Kind::last);
  }
  for (const StageSample& s : m.stages) {
    for (const char* f : {"queued_packet_seconds", "launches", "busy_s", "slowed_s"}) col("stages", stage_key(s), f);
    if (s.sm_share >= 0) col("stages", stage_key(s), "sm_share", Kind::last);
  }
}

std::vector<double> TimeSeries::values(const MetricsSnapshot& m) const {
  std::vector<double> v;
  v.reserve(columns_.size());
  for (const PortSample& p : m.ports)
    for (uint64_t x : {p.rx_packets, p.tx_packets, p.rx_bytes, p.tx_bytes, p.dropped}) v.push_back(double(x));
  for (const NfSample& n : m.nfs)
    v.insert(v.end(), {double(n.in), double(n.drops.total()), double(n.in_bytes), double(n.out_bytes)});
  for (const ChainSample& c : m.chains) {
    v.insert(v.end(), {double(c.batches), double(c.packets)});
    if (!m.scheduler.empty()) v.push_back(c.planned_batch);
  }
  for (const StageSample& s : m.stages) {
    v.insert(v.end(), {s.queued_packet_seconds, double(s.launches), s.busy_s, s.slowed_s});
    if (s.sm_share >= 0) v.push_back(s.sm_share);
  }
  return v;
}

void TimeSeries::add(const MetricsSnapshot& now) {
  if (columns_.empty()) make_columns(now);
  std::vector<double> cur = values(now);
  if (cur.size() != columns_.size()) return;  // the pipeline's shape changed: not a run's series
  Row r;
  r.t = now.elapsed_s;
  r.dt = now.elapsed_s - (prev_ ? prev_->elapsed_s : 0);
  r.v = cur;
  if (prev_) {
    const std::vector<double> was = values(*prev_);
    for (size_t i = 0; i < cur.size(); ++i)
      if (columns_[i].kind == Kind::sum) r.v[i] -= was[i];
  }
  rows_.push_back(std::move(r));
  bytes_counted_.clear();
  for (const PortSample& p : now.ports) bytes_counted_.insert(bytes_counted_.end(), {p.rx_bytes_counted, p.tx_bytes_counted});
  prev_ = now;
  if (rows_.size() >= kMaxSamples) halve();
}

// Neighbouring samples merged in pairs: sums add, the state is the later one's.
void TimeSeries::halve() {
  std::vector<Row> out;
  for (size_t i = 0; i + 1 < rows_.size(); i += 2) {
    Row r = rows_[i + 1];
    r.dt += rows_[i].dt;
    for (size_t c = 0; c < columns_.size(); ++c)
      if (columns_[c].kind == Kind::sum) r.v[c] += rows_[i].v[c];
    out.push_back(std::move(r));
  }
  if (rows_.size() % 2) out.push_back(rows_.back());
  rows_ = std::move(out);
  interval_s_ *= 2;
}

// Column-wise: t_s and dt_s, then per port, NF, chain and stage one array per figure.
// Derived per interval: a chain's mean batch, a stage's mean queue and GPU busy share.
nlohmann::json TimeSeries::to_json() const {
  nlohmann::json j = {{"interval_s", interval_s_}, {"t_s", nlohmann::json::array()},
                      {"dt_s", nlohmann::json::array()}, {"ports", nlohmann::json::object()},
                      {"nfs", nlohmann::json::object()}, {"chains", nlohmann::json::object()},
                      {"stages", nlohmann::json::object()}};
  for (const Row& r : rows_) {
    j["t_s"].push_back(r.t);
    j["dt_s"].push_back(r.dt);
  }
  for (size_t c = 0; c < columns_.size(); ++c) {
    const Column& col = columns_[c];
    nlohmann::json arr = nlohmann::json::array();
    const bool bytes = col.group == "ports" && (col.field == "rx_bytes" || col.field == "tx_bytes");
    const size_t port = c / 5;  // ports come first, five columns each
    const bool counted = !bytes || bytes_counted_.at(port * 2 + (col.field == "tx_bytes"));
    for (const Row& r : rows_) {
      const double v = r.v[c];
      if (!counted) arr.push_back(nullptr);
      else if (col.kind == Kind::sum && col.field != "queued_packet_seconds" && col.field != "busy_s" &&
               col.field != "slowed_s")
        arr.push_back(uint64_t(v));
      else
        arr.push_back(v);
    }
    j[col.group][col.name][col.field] = std::move(arr);
  }
  for (auto& [name, c] : j["chains"].items()) {
    nlohmann::json mean = nlohmann::json::array();
    for (size_t i = 0; i < c["batches"].size(); ++i) {
      const double b = c["batches"][i].get<double>();
      mean.push_back(b > 0 ? c["batch_packets"][i].get<double>() / b : 0.0);
    }
    c["mean_batch_packets"] = std::move(mean);
  }
  for (auto& [name, s] : j["stages"].items()) {
    nlohmann::json q = nlohmann::json::array(), busy = nlohmann::json::array();
    for (size_t i = 0; i < rows_.size(); ++i) {
      const double dt = rows_[i].dt;
      q.push_back(dt > 0 ? s["queued_packet_seconds"][i].get<double>() / dt : 0.0);
      busy.push_back(dt > 0 ? s["busy_s"][i].get<double>() / dt : 0.0);
    }
    s["mean_queued_packets"] = std::move(q);
    s["busy_share"] = std::move(busy);
  }
  return j;
}

}  // namespace gpunfv
