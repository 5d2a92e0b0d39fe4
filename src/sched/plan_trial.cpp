#include "sched/plan_trial.h"

namespace gpunfv {

void PlanTrial::start(uint64_t now_ns) { begin_arm(Phase::model, now_ns); }

void PlanTrial::begin_arm(Phase ph, uint64_t now_ns) {
  phase_ = ph;
  arm_start_ns_ = now_ns;
  sum_ = 0;
  samples_ = 0;
}

bool PlanTrial::observe(double rate_pps, uint64_t now_ns) {
  if (phase_ == Phase::idle) return false;
  const uint64_t since = now_ns - arm_start_ns_;
  if (since < p_.settle_ns) return false;
  sum_ += rate_pps;
  ++samples_;
  if (since < p_.settle_ns + p_.measure_ns) return false;
  const double mean = sum_ / double(samples_);
  if (phase_ == Phase::model) {
    rate_[0] = mean;
    begin_arm(Phase::whole_gpu, now_ns);
    next_ = Arm::whole_gpu;
    return true;
  }
  rate_[1] = mean;
  phase_ = Phase::idle;
  winner_ = rate_[1] > rate_[0] ? Arm::whole_gpu : Arm::model;
  next_ = winner_;
  return winner_ == Arm::model;  // the whole GPU is applied already; back to the model's plan
}

}  // namespace gpunfv
