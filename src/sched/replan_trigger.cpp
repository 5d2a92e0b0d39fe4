#include "sched/replan_trigger.h"

#include <algorithm>
#include <cmath>

namespace gpunfv {

namespace {

double total(const ReplanTrigger::Rates& r) {
  double t = 0;
  for (const auto& chain : r)
    for (double v : chain) t += v;
  return t;
}

}  // namespace

bool ReplanTrigger::due(const Rates& rates, uint64_t now_ns) const {
  if (!have_plan_) return total(rates) > 0;
  if (now_ns - last_ns_ < p_.min_interval_ns) return false;
  bool moved = rates.size() != planned_.size();
  for (size_t c = 0; c < rates.size() && !moved; ++c) {
    if (rates[c].size() != planned_[c].size()) {
      moved = true;
      break;
    }
    for (size_t k = 0; k < rates[c].size() && !moved; ++k) {
      const double was = planned_[c][k], is = rates[c][k];
      moved = std::fabs(is - was) > p_.step * std::max(was, 1.0);
    }
  }
  if (!moved) return false;
  const double now_total = total(rates);
  return now_total > 0 && now_total >= p_.idle_share * total(planned_);
}

void ReplanTrigger::planned(const Rates& rates, uint64_t now_ns) {
  planned_ = rates;
  last_ns_ = now_ns;
  have_plan_ = true;
}

}  // namespace gpunfv
