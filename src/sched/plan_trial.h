// gnet at saturation: the model's plan against unco's whole-GPU lanes, measured. Unco is one
// allocation gnet may choose; the model cannot predict how NFs contend on a shared GPU, so when
// a saturated chain is re-planned both run for a while and the one that carried more stays,
// until the next re-plan. Each arm settles (queues drain into the new lanes), then its input
// rate is averaged over a window.
//
// Pure logic over rates and a caller's clock, so it is tested with made-up ones.
#pragma once

#include <cstdint>

namespace gpunfv {

class PlanTrial {
 public:
  enum class Arm { model, whole_gpu };
  struct Params {
    uint64_t settle_ns = 200'000'000ull;   // after a switch, before measuring
    uint64_t measure_ns = 500'000'000ull;  // averaged per arm
  };

  PlanTrial() = default;
  explicit PlanTrial(Params p) : p_(p) {}

  // The model's plan was just applied to a saturated chain: measure it, then the whole GPU.
  void start(uint64_t now_ns);
  bool active() const { return phase_ != Phase::idle; }
  // A rate measured at now_ns (the chains' input, packets/s). Returns true when the caller must
  // switch lanes now: to next_arm().
  bool observe(double rate_pps, uint64_t now_ns);
  Arm next_arm() const { return next_; }
  // After a trial: which arm won, and the two rates measured.
  Arm winner() const { return winner_; }
  double model_rate() const { return rate_[0]; }
  double whole_gpu_rate() const { return rate_[1]; }

 private:
  enum class Phase { idle, model, whole_gpu };
  void begin_arm(Phase ph, uint64_t now_ns);

  Params p_;
  Phase phase_ = Phase::idle;
  uint64_t arm_start_ns_ = 0;
  double sum_ = 0;
  uint64_t samples_ = 0;
  double rate_[2] = {0, 0};
  Arm next_ = Arm::model, winner_ = Arm::model;
};

}  // namespace gpunfv
