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

TEST(PlanTrial, KeepsTheWholeGpuWhenItCarriesMore) {
  PlanTrial t;
  t.start(0);
  EXPECT_TRUE(t.active());
  const uint64_t first = feed(t, 70e6, 100 * kMs, 5000 * kMs);
  ASSERT_GT(first, 0u);
  EXPECT_GE(first, 700 * kMs);  // settled 200 ms, then measured 500 ms
  EXPECT_EQ(t.next_arm(), PlanTrial::Arm::whole_gpu);
  EXPECT_EQ(feed(t, 76e6, first + 100 * kMs, 5000 * kMs), 0u);  // no switch back
  EXPECT_FALSE(t.active());
  EXPECT_EQ(t.winner(), PlanTrial::Arm::whole_gpu);
  EXPECT_DOUBLE_EQ(t.model_rate(), 70e6);
  EXPECT_DOUBLE_EQ(t.whole_gpu_rate(), 76e6);
}

TEST(PlanTrial, GoesBackToTheModelsPlanWhenItCarriedMore) {
  PlanTrial t;
  t.start(0);
  const uint64_t first = feed(t, 80e6, 100 * kMs, 5000 * kMs);
  ASSERT_GT(first, 0u);
  const uint64_t second = feed(t, 60e6, first + 100 * kMs, 5000 * kMs);
  ASSERT_GT(second, first);
  EXPECT_EQ(t.next_arm(), PlanTrial::Arm::model);
  EXPECT_EQ(t.winner(), PlanTrial::Arm::model);
  EXPECT_FALSE(t.active());
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
  EXPECT_DOUBLE_EQ(t.model_rate(), 50e6);
}

TEST(PlanTrial, IdleTrialIgnoresRates) {
  PlanTrial t;
  EXPECT_FALSE(t.active());
  EXPECT_FALSE(t.observe(1e6, 10 * kMs));
}

}  // namespace
}  // namespace gpunfv
