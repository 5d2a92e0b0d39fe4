#include <fmt/format.h>

#include "nf_bench/timing.h"

namespace gpunfv::bench {

namespace {

double gbps_of(const TimedRow& r, double mpps, double mean_frame) {
  return r.lookup_only ? 0 : mpps * 1e6 * mean_frame * 8 / 1e9;
}

std::string scaling_text(const TimedRow& r) {
  if (r.threads <= 1 || r.scaling <= 0) return "-";
  return fmt::format("{:.2f}x{}", r.scaling, r.poor_scaling ? " LOW" : "");
}

}  // namespace

void print_timed_header() {
  fmt::print("\n| size | path | work included | Mpps median [min-max] | Gbit/s | ratio | scaling "
             "| mismatches |\n|---:|---|---|---:|---:|---:|---:|---:|\n");
}

void print_timed_row(const TimedRow& r, uint32_t size, double mean_frame, double base_mpps) {
  const Spread s = r.rate();
  const std::string gbps = r.lookup_only ? "-" : fmt::format("{:.2f}", gbps_of(r, s.median, mean_frame));
  const double ratio = base_mpps > 0 ? s.median / base_mpps : 0;
  fmt::print("| {} | {} | {} | {:.2f} [{:.2f}-{:.2f}] | {} | {:.2f}x | {} | {} |\n", size, r.path,
             r.scope, s.median, s.min, s.max, gbps, ratio, scaling_text(r),
             r.checked ? r.check.text() : r.note.empty() ? "-" : r.note);
}

nlohmann::json timed_row_json(const TimedRow& r, double mean_frame, double base_mpps) {
  const Spread s = r.rate();
  nlohmann::json row = {{"path", r.path},
                        {"scope", r.scope},
                        {"threads", r.threads},
                        {"peer", r.peer},
                        {"lookup_only", r.lookup_only},
                        {"mpps", s.median},
                        {"mpps_min", s.min},
                        {"mpps_max", s.max},
                        {"samples_mpps", r.mpps},
                        {"passes", r.passes},
                        {"timed_seconds", r.seconds},
                        {"warmup_seconds", r.warm_seconds},
                        {"ratio", base_mpps > 0 ? s.median / base_mpps : 0}};
  row["gbps"] = r.lookup_only ? nlohmann::json(nullptr)
                              : nlohmann::json(gbps_of(r, s.median, mean_frame));
  if (r.threads > 1) {
    row["scaling"] = r.scaling;
    row["poor_scaling"] = r.poor_scaling;
  }
  if (r.checked) row["check"] = r.check.json();
  else if (!r.note.empty()) row["note"] = r.note;
  return row;
}

}  // namespace gpunfv::bench
