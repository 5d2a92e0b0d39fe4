#include "sched/plan_trial.h"

namespace gpunfv {

void PlanTrial::start(uint64_t now_ns) {
  rebaseline_at_ns_ = 0;
  begin_arm(Phase::model, now_ns);
}

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
  switch (phase_) {
    case Phase::model:
      first_model_ = mean;
      begin_arm(Phase::whole_gpu, now_ns);
      next_ = Arm::whole_gpu;
      return true;
    case Phase::whole_gpu:
      rate_[1] = mean;
      begin_arm(Phase::model_again, now_ns);
      next_ = Arm::model;
      return true;
    default:
      rate_[0] = (first_model_ + mean) / 2;
      phase_ = Phase::idle;
      winner_ = rate_[0] > rate_[1] * (1 + p_.min_gain) ? Arm::model : Arm::whole_gpu;
      next_ = winner_;
      if (winner_ == Arm::model) return false;  // the model's plan is applied already
      rebaseline_at_ns_ = now_ns + p_.rebaseline_ns;
      return true;
  }
}

PlanTrial::Baseline PlanTrial::baseline(uint64_t now_ns) {
  if (rebaseline_at_ns_ == 0) return Baseline::none;
  if (now_ns < rebaseline_at_ns_) return Baseline::wait;
  rebaseline_at_ns_ = 0;
  return Baseline::take;
}

}  // namespace gpunfv
