// gnet at saturation: the model's plan against unco's whole-GPU lanes, measured. Unco is one
// allocation gnet may choose; the model cannot predict how NFs contend on a shared GPU, so when
// a saturated chain is re-planned both run for a while and the one that carried more stays,
// until the next re-plan. Each arm settles (queues drain into the new lanes), then its input
// rate is averaged over a window.
//
// The arms run model, whole GPU, model: the model's rate is the mean of its two windows, so a
// rate that drifts during the trial (host memory warming, queues still filling after start)
// does not favour the arm measured first. The model's plan stays only if it carries more than
// the whole GPU by min_gain: on a tie, partitions only cost rebuilds and flexibility. On an H200
// at saturation one window's rate varies by about 5% between runs of the same lanes, and plans
// whose windows led by 5.9% carried less than the whole GPU afterwards: min_gain is twice that
// spread.
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
    uint64_t measure_ns = 500'000'000ull;  // averaged per window
    double min_gain = 0.10;                // the model's plan must carry this much more
    // After the last switch to the whole GPU: its lanes settle, then one rate sample of the
    // scheduler (100 ms) measures them.
    uint64_t rebaseline_ns = 300'000'000ull;
  };

  PlanTrial() = default;
  explicit PlanTrial(Params p) : p_(p) {}

  // The model's plan was just applied to a saturated chain: measure it, the whole GPU, and it
  // again.
  void start(uint64_t now_ns);
  bool active() const { return phase_ != Phase::idle; }
  // A rate measured at now_ns (the chains' input, packets/s). Returns true when the caller must
  // switch lanes now: to next_arm(). A switch while active() is part of the trial; one that
  // ends it applies the winner.
  bool observe(double rate_pps, uint64_t now_ns);
  Arm next_arm() const { return next_; }
  // After a trial: which arm won, and the two rates measured (the model's: its windows' mean).
  Arm winner() const { return winner_; }
  double model_rate() const { return rate_[0]; }
  double whole_gpu_rate() const { return rate_[1]; }

  // The re-plan baseline after a trial. The trial ends on the model's lanes, so when it then
  // switches to the whole GPU the rates measured at the switch are not the kept lanes': the
  // caller waits (`wait`: no re-plan), then takes the rates of that moment as its baseline
  // (`take`, once), so the switch itself does not look like a traffic change. `none` otherwise.
  enum class Baseline { none, wait, take };
  Baseline baseline(uint64_t now_ns);

 private:
  enum class Phase { idle, model, whole_gpu, model_again };
  void begin_arm(Phase ph, uint64_t now_ns);

  Params p_;
  Phase phase_ = Phase::idle;
  uint64_t arm_start_ns_ = 0;
  double sum_ = 0;
  uint64_t samples_ = 0;
  double first_model_ = 0;
  uint64_t rebaseline_at_ns_ = 0;  // 0: no baseline pending
  double rate_[2] = {0, 0};
  Arm next_ = Arm::model, winner_ = Arm::model;
};

}  // namespace gpunfv
