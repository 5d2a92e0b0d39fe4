// gnet's trial of its plan against unco's whole-GPU lanes, over made-up rates and clock.
#include "sched/plan_trial.h"

#include <gtest/gtest.h>

namespace gpunfv {
namespace {

constexpr uint64_t kMs = 1'000'000ull;

// Feeds `rate` every 100 ms from `from` until the trial asks for a switch or `until`; returns
// the time of the switch (0: none).
uint64_t feed(PlanTrial& t, double rate, uint64_t from, uint64_t until) {
  for (uint64_t now = from; now <= until; now += 100 * kMs)
    if (t.observe(rate, now)) return now;
  return 0;
}

// Runs a whole trial: the model's plan at `model`, the whole GPU at `whole`, the model again at
// `model_again`. Returns whether the last window asked for a switch (to the whole GPU).
bool run_trial(PlanTrial& t, double model, double whole, double model_again) {
  t.start(0);
  const uint64_t first = feed(t, model, 100 * kMs, 5000 * kMs);
  EXPECT_GE(first, 700 * kMs);  // settled 200 ms, then measured 500 ms
  EXPECT_EQ(t.next_arm(), PlanTrial::Arm::whole_gpu);
  const uint64_t second = feed(t, whole, first + 100 * kMs, first + 5000 * kMs);
  EXPECT_GE(second, first + 700 * kMs);
  EXPECT_EQ(t.next_arm(), PlanTrial::Arm::model);
  EXPECT_TRUE(t.active());
  const uint64_t third = feed(t, model_again, second + 100 * kMs, second + 1000 * kMs);
  EXPECT_FALSE(t.active());
  return third != 0;
}

TEST(PlanTrial, KeepsTheWholeGpuWhenItCarriesMore) {
  PlanTrial t;
  EXPECT_TRUE(run_trial(t, 70e6, 76e6, 70e6));  // ends on the model's plan: switch back
  EXPECT_EQ(t.next_arm(), PlanTrial::Arm::whole_gpu);
  EXPECT_EQ(t.winner(), PlanTrial::Arm::whole_gpu);
  EXPECT_DOUBLE_EQ(t.model_rate(), 70e6);
  EXPECT_DOUBLE_EQ(t.whole_gpu_rate(), 76e6);
}

TEST(PlanTrial, KeepsTheModelsPlanWhenItCarriesClearlyMore) {
  PlanTrial t;
  EXPECT_FALSE(run_trial(t, 80e6, 60e6, 80e6));  // already on the model's plan: no switch
  EXPECT_EQ(t.winner(), PlanTrial::Arm::model);
  EXPECT_EQ(t.next_arm(), PlanTrial::Arm::model);
}

TEST(PlanTrial, ATieGoesToTheWholeGpu) {
  PlanTrial t;  // 3% more is inside the 10% the model must clear
  EXPECT_TRUE(run_trial(t, 24.72e6, 24.0e6, 24.72e6));
  EXPECT_EQ(t.winner(), PlanTrial::Arm::whole_gpu);
  PlanTrial noise;  // 6% more: within twice a window's spread between runs
  EXPECT_TRUE(run_trial(noise, 25.44e6, 24.0e6, 25.44e6));
  EXPECT_EQ(noise.winner(), PlanTrial::Arm::whole_gpu);
  PlanTrial wider({200 * kMs, 500 * kMs, 0.0});  // no gain asked: the higher rate wins
  EXPECT_FALSE(run_trial(wider, 24.72e6, 24.0e6, 24.72e6));
  EXPECT_EQ(wider.winner(), PlanTrial::Arm::model);
}

TEST(PlanTrial, FallingRatesDoNotFavourTheArmMeasuredFirst) {
  // The input falls by 2 Mpps a window whatever the lanes: measured once, the model's plan
  // would lead by 8%; its two windows average to the whole GPU's rate, a tie.
  PlanTrial t;
  EXPECT_TRUE(run_trial(t, 26e6, 24e6, 22e6));
  EXPECT_DOUBLE_EQ(t.model_rate(), 24e6);
  EXPECT_EQ(t.winner(), PlanTrial::Arm::whole_gpu);
}

TEST(PlanTrial, AfterSwitchingToTheWholeGpuTheBaselineWaitsForItsLanes) {
  PlanTrial t;
  EXPECT_EQ(t.baseline(0), PlanTrial::Baseline::none);
  t.start(0);
  const uint64_t first = feed(t, 70e6, 100 * kMs, 5000 * kMs);
  const uint64_t second = feed(t, 76e6, first + 100 * kMs, first + 5000 * kMs);
  const uint64_t end = feed(t, 70e6, second + 100 * kMs, second + 5000 * kMs);
  ASSERT_GT(end, second);  // the trial ended by switching to the whole GPU
  EXPECT_EQ(t.baseline(end), PlanTrial::Baseline::wait);
  EXPECT_EQ(t.baseline(end + 200 * kMs), PlanTrial::Baseline::wait);
  EXPECT_EQ(t.baseline(end + 300 * kMs), PlanTrial::Baseline::take);
  EXPECT_EQ(t.baseline(end + 400 * kMs), PlanTrial::Baseline::none);  // once
}

TEST(PlanTrial, KeepingTheModelsPlanLeavesTheBaselineAsItIs) {
  PlanTrial t;
  EXPECT_FALSE(run_trial(t, 80e6, 60e6, 80e6));
  EXPECT_EQ(t.baseline(10'000 * kMs), PlanTrial::Baseline::none);
}

TEST(PlanTrial, RatesWhileSettlingDoNotCount) {
  PlanTrial t({200 * kMs, 300 * kMs});
  t.start(0);
  // Right after the switch queues drain into the new lanes at a burst rate: not measured.
  EXPECT_FALSE(t.observe(500e6, 100 * kMs));
  EXPECT_FALSE(t.observe(50e6, 200 * kMs));
  EXPECT_FALSE(t.observe(50e6, 300 * kMs));
  EXPECT_FALSE(t.observe(50e6, 400 * kMs));
  EXPECT_TRUE(t.observe(50e6, 500 * kMs));
  // The same on the whole GPU's window.
  EXPECT_FALSE(t.observe(500e6, 600 * kMs));
  EXPECT_FALSE(t.observe(40e6, 700 * kMs));
  EXPECT_FALSE(t.observe(40e6, 900 * kMs));
  EXPECT_TRUE(t.observe(40e6, 1000 * kMs));
  EXPECT_DOUBLE_EQ(t.whole_gpu_rate(), 40e6);
}

TEST(PlanTrial, IdleTrialIgnoresRates) {
  PlanTrial t;
  EXPECT_FALSE(t.active());
  EXPECT_FALSE(t.observe(1e6, 10 * kMs));
}

}  // namespace
}  // namespace gpunfv
