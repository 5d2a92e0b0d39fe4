// gnet's re-plan trigger over made-up rates and a made-up clock: a rate step of more than 10%
// re-plans, noise below it does not, nor does a step within a second of the last plan, nor
// traffic that all but stopped.
#include "sched/replan_trigger.h"

#include <gtest/gtest.h>

#include <random>

namespace gpunfv {
namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;

ReplanTrigger::Rates rates(double first, double second) { return {{first, second}}; }

TEST(ReplanTrigger, FirstRatesPlanUnlessNothingFlows) {
  ReplanTrigger t;
  EXPECT_FALSE(t.due(rates(0, 0), 5 * kSecond));
  EXPECT_TRUE(t.due(rates(1e6, 5e5), 5 * kSecond));
}

TEST(ReplanTrigger, FiresOnAStepAndNotOnNoise) {
  ReplanTrigger t;
  t.planned(rates(10e6, 5e6), 0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-0.08, 0.08);  // within 10% of the planned rates
  uint64_t now = 0;
  for (int i = 0; i < 200; ++i) {
    now += kSecond / 2;
    EXPECT_FALSE(t.due(rates(10e6 * (1 + noise(rng)), 5e6 * (1 + noise(rng))), now)) << i;
  }
  now += kSecond;
  EXPECT_TRUE(t.due(rates(10e6, 5.6e6), now));   // the second NF's input up 12%
  EXPECT_TRUE(t.due(rates(8.5e6, 5e6), now));     // the first NF's down 15%
}

TEST(ReplanTrigger, AtMostOncePerInterval) {
  ReplanTrigger t;
  t.planned(rates(10e6, 5e6), 10 * kSecond);
  EXPECT_FALSE(t.due(rates(20e6, 10e6), 10 * kSecond + kSecond / 2));
  EXPECT_TRUE(t.due(rates(20e6, 10e6), 11 * kSecond));
  t.planned(rates(20e6, 10e6), 11 * kSecond);
  EXPECT_FALSE(t.due(rates(20.5e6, 10.2e6), 30 * kSecond));  // the new plan's rates, within 10%
}

TEST(ReplanTrigger, TrafficThatAllButStoppedKeepsThePlan) {
  ReplanTrigger t;
  t.planned(rates(10e6, 5e6), 0);
  EXPECT_FALSE(t.due(rates(0, 0), 5 * kSecond));
  EXPECT_FALSE(t.due(rates(4e5, 2e5), 5 * kSecond));  // 4% of the planned total
  EXPECT_TRUE(t.due(rates(1e6, 5e5), 5 * kSecond));   // 10%: a real drop in load re-plans
}

TEST(ReplanTrigger, ParametersAreHonoured) {
  ReplanTrigger t({0.5, kSecond / 10, 0.0});
  t.planned(rates(10e6, 5e6), 0);
  EXPECT_FALSE(t.due(rates(14e6, 5e6), kSecond));  // 40% < 50%
  EXPECT_TRUE(t.due(rates(16e6, 5e6), kSecond / 10));
}

}  // namespace
}  // namespace gpunfv
