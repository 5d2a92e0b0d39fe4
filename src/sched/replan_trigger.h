// When gnet re-plans (G-NET section 5.3: "the scheduling scheme runs when the traffic of an NF
// changes for more than 10%"): some node's measured input rate moved by more than `step` of
// the rate the current plan was made for. Two guards keep noise from making it thrash: at most
// one plan per `min_interval_ns`, and traffic that all but stopped (below `idle_share` of the
// planned total: a source that ended or stalled) keeps the plan, which would otherwise shrink
// every partition only to grow them back when traffic resumes.
//
// Pure logic over rates and a caller's clock, so it is tested with made-up ones.
#pragma once

#include <cstdint>
#include <vector>

namespace gpunfv {

class ReplanTrigger {
 public:
  using Rates = std::vector<std::vector<double>>;  // packets/s into each node of each chain

  struct Params {
    double step = 0.10;
    uint64_t min_interval_ns = 1'000'000'000ull;
    double idle_share = 0.05;
  };

  ReplanTrigger() = default;
  explicit ReplanTrigger(Params p) : p_(p) {}

  // Whether rates measured at `now_ns` call for a new plan. The first rates always do.
  bool due(const Rates& rates, uint64_t now_ns) const;
  // A plan was made for `rates` at `now_ns`.
  void planned(const Rates& rates, uint64_t now_ns);
  const Rates& planned_rates() const { return planned_; }

 private:
  Params p_;
  Rates planned_;
  uint64_t last_ns_ = 0;
  bool have_plan_ = false;
};

}  // namespace gpunfv
