#include "sched/perf_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace gpunfv {

namespace {
constexpr const char* kFormat = "gpunfv-perf-model/1";
}

LinearFit fit_line(const std::vector<Sample>& pts) {
  const size_t n = pts.size();
  double sx = 0, sy = 0;
  for (const Sample& p : pts) sx += p.x, sy += p.y;
  const double mx = n ? sx / n : 0, my = n ? sy / n : 0;
  // Centred sums: stable when x is large (batches of 10^5) and times tiny (10^-6 s).
  double sxx = 0, sxy = 0, syy = 0;
  for (const Sample& p : pts) {
    sxx += (p.x - mx) * (p.x - mx);
    sxy += (p.x - mx) * (p.y - my);
    syy += (p.y - my) * (p.y - my);
  }
  if (n < 2 || sxx <= 0) throw std::invalid_argument("a line needs points at two different x");
  LinearFit f;
  f.points = n;
  f.k = sxy / sxx;
  f.b = my - f.k * mx;
  double ss_res = 0;
  for (const Sample& p : pts) {
    const double e = p.y - f.at(p.x);
    ss_res += e * e;
    if (p.y != 0) f.max_rel_err = std::max(f.max_rel_err, std::fabs(e / p.y));
  }
  f.r2 = syy > 0 ? 1 - ss_res / syy : (ss_res <= 1e-30 ? 1 : 0);
  return f;
}

void fit_entry(ModelEntry& e) {
  e.kernel_fit = fit_line(e.kernel_samples);
  e.transfer_fit = fit_line(e.transfer_samples);
  e.model = {e.kernel_fit.k, e.kernel_fit.b, e.transfer_fit.k, e.transfer_fit.b};
}

void ModelStore::add(ModelEntry e) {
  for (ModelEntry& x : entries_)
    if (x.device == e.device && x.nf_name == e.nf_name && x.nf_type == e.nf_type &&
        x.packet_bytes == e.packet_bytes) {
      x = std::move(e);
      return;
    }
  entries_.push_back(std::move(e));
}

std::optional<NfModel> ModelStore::find(const std::string& device, const std::string& nf_name,
                                        const std::string& nf_type, uint32_t bytes) const {
  const ModelEntry *below = nullptr, *above = nullptr;
  for (const ModelEntry& e : entries_) {
    if (e.device != device || e.nf_name != nf_name || e.nf_type != nf_type) continue;
    if (e.packet_bytes == bytes) return e.model;
    if (e.packet_bytes < bytes && (!below || e.packet_bytes > below->packet_bytes)) below = &e;
    if (e.packet_bytes > bytes && (!above || e.packet_bytes < above->packet_bytes)) above = &e;
  }
  if (!below || !above) return std::nullopt;
  const double t = double(bytes - below->packet_bytes) / (above->packet_bytes - below->packet_bytes);
  auto mix = [t](double a, double b) { return a + (b - a) * t; };
  const NfModel &a = below->model, &b = above->model;
  return NfModel{mix(a.k1, b.k1), mix(a.b1, b.b1), mix(a.k2, b.k2), mix(a.b2, b.b2)};
}

namespace {

nlohmann::json fit_json(const LinearFit& f) {
  return {{"k", f.k}, {"b", f.b}, {"r2", f.r2}, {"max_rel_err", f.max_rel_err}, {"points", f.points}};
}

nlohmann::json samples_json(const std::vector<Sample>& s) {
  nlohmann::json a = nlohmann::json::array();
  for (const Sample& p : s) a.push_back({p.x, p.y});
  return a;
}

std::vector<Sample> samples_from(const nlohmann::json& a) {
  std::vector<Sample> s;
  for (const auto& p : a) s.push_back({p.at(0).get<double>(), p.at(1).get<double>()});
  return s;
}

}  // namespace

nlohmann::json ModelStore::to_json() const {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelEntry& e : entries_)
    models.push_back({{"device", e.device},
                      {"nf", e.nf_name},
                      {"type", e.nf_type},
                      {"packet_bytes", e.packet_bytes},
                      {"profile_sms", e.profile_sms},
                      {"k1", e.model.k1},
                      {"b1", e.model.b1},
                      {"k2", e.model.k2},
                      {"b2", e.model.b2},
                      {"kernel_fit", fit_json(e.kernel_fit)},
                      {"transfer_fit", fit_json(e.transfer_fit)},
                      {"kernel_samples", samples_json(e.kernel_samples)},
                      {"transfer_samples", samples_json(e.transfer_samples)},
                      {"note", e.note}});
  return {{"format", kFormat},
          {"units", "seconds; kernel samples are (packets per SM, s), transfer (packets, s)"},
          {"models", models}};
}

ModelStore ModelStore::from_json(const nlohmann::json& j, const std::string& where) {
  ModelStore s;
  try {
    if (j.at("format").get<std::string>() != kFormat)
      throw ConfigError(where, "not a " + std::string(kFormat) + " file");
    for (const auto& m : j.at("models")) {
      ModelEntry e;
      e.device = m.at("device").get<std::string>();
      e.nf_name = m.at("nf").get<std::string>();
      e.nf_type = m.at("type").get<std::string>();
      e.packet_bytes = m.at("packet_bytes").get<uint32_t>();
      e.profile_sms = m.value("profile_sms", 0);
      e.kernel_samples = samples_from(m.value("kernel_samples", nlohmann::json::array()));
      e.transfer_samples = samples_from(m.value("transfer_samples", nlohmann::json::array()));
      e.note = m.value("note", "");
      e.model = {m.at("k1").get<double>(), m.at("b1").get<double>(), m.at("k2").get<double>(),
                 m.at("b2").get<double>()};
      // The fit statistics are recomputed from the samples where there are enough of them.
      if (e.kernel_samples.size() >= 2 && e.transfer_samples.size() >= 2) {
        NfModel stored = e.model;
        fit_entry(e);
        e.model = stored;
      }
      s.add(std::move(e));
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(where, std::string("bad performance model: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw ConfigError(where, std::string("bad performance model samples: ") + e.what());
  }
  return s;
}

void ModelStore::save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw ConfigError(path, "cannot write the performance model");
  out << to_json().dump(2) << "\n";
  if (!out) throw ConfigError(path, "cannot write the performance model");
}

ModelStore ModelStore::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "cannot read the performance model");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path, std::string("malformed JSON: ") + e.what());
  }
  return from_json(j, path);
}

}  // namespace gpunfv
