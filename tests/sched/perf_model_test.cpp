#include "sched/perf_model.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace gpunfv {
namespace {

TEST(PerfModel, FitsAnExactLine) {
  LinearFit f = fit_line({{256, 2e-6 * 256 + 5e-6}, {512, 2e-6 * 512 + 5e-6}, {1024, 2e-6 * 1024 + 5e-6}});
  EXPECT_NEAR(f.k, 2e-6, 1e-15);
  EXPECT_NEAR(f.b, 5e-6, 1e-12);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  EXPECT_LT(f.max_rel_err, 1e-9);
  EXPECT_EQ(f.points, 3u);
}

TEST(PerfModel, ReportsTheErrorOfANoisyFit) {
  // y = x with one point off by 10, by hand (x 0,1,2,3; y 0,1,2,13): mean x 1.5, mean y 4,
  // sxx = 5, sxy = 6 + 1.5 - 1 + 13.5 = 20, so k = 4, b = 4 - 4 * 1.5 = -2. Fitted -2, 2, 6, 10:
  // residuals 2, 1, 4, 3 (ss_res 30), syy = 16 + 9 + 4 + 81 = 110, R^2 = 1 - 30/110.
  LinearFit f = fit_line({{0, 0}, {1, 1}, {2, 2}, {3, 13}});
  EXPECT_NEAR(f.k, 4, 1e-12);
  EXPECT_NEAR(f.b, -2, 1e-12);
  EXPECT_NEAR(f.r2, 1 - 30.0 / 110, 1e-12);
  // The worst relative error is at x = 2: 6 against 2 (y = 0 is left out).
  EXPECT_NEAR(f.max_rel_err, 2.0, 1e-12);
}

TEST(PerfModel, NeedsTwoDistinctX) {
  EXPECT_THROW(fit_line({}), std::invalid_argument);
  EXPECT_THROW(fit_line({{5, 1}, {5, 2}}), std::invalid_argument);
}

TEST(PerfModel, Equations1And2) {
  NfModel m{1e-6, 10e-6, 0.1e-6, 5e-6};
  // L = k1 B0 + b1 + k2 B0 N + b2 + C = 100e-6 + 10e-6 + 0.1e-6*100*4 + 5e-6 + 1e-6 = 156e-6
  EXPECT_NEAR(m.latency_s(4, 100, 1e-6), 156e-6, 1e-15);
  EXPECT_NEAR(m.throughput_pps(4, 100, 1e-6), 400 / 156e-6, 1e-3);
}

ModelEntry entry(const std::string& nf, uint32_t bytes, double k1, double b1, double k2, double b2) {
  ModelEntry e;
  e.device = "NVIDIA H100";
  e.nf_name = nf;
  e.nf_type = "router";
  e.packet_bytes = bytes;
  e.profile_sms = 8;
  for (double x : {256.0, 512.0, 1024.0}) {
    e.kernel_samples.push_back({x, k1 * x + b1});
    e.transfer_samples.push_back({x * 8, k2 * x * 8 + b2});
  }
  fit_entry(e);
  return e;
}

TEST(PerfModel, InterpolatesBetweenMeasuredSizes) {
  ModelStore s;
  s.add(entry("r1", 64, 1e-6, 10e-6, 1e-8, 4e-6));
  s.add(entry("r1", 512, 3e-6, 20e-6, 5e-8, 8e-6));
  auto exact = s.find("NVIDIA H100", "r1", "router", 64);
  ASSERT_TRUE(exact);
  EXPECT_NEAR(exact->k1, 1e-6, 1e-15);
  auto mid = s.find("NVIDIA H100", "r1", "router", 288);  // half way
  ASSERT_TRUE(mid);
  EXPECT_NEAR(mid->k1, 2e-6, 1e-15);
  EXPECT_NEAR(mid->b1, 15e-6, 1e-12);
  EXPECT_NEAR(mid->k2, 3e-8, 1e-16);
  EXPECT_NEAR(mid->b2, 6e-6, 1e-12);
  EXPECT_FALSE(s.find("NVIDIA H100", "r1", "router", 1024));  // outside what was measured
  EXPECT_FALSE(s.find("NVIDIA H100", "r1", "router", 32));
  EXPECT_FALSE(s.find("NVIDIA H200", "r1", "router", 64));    // another device
  EXPECT_FALSE(s.find("NVIDIA H100", "r1", "firewall", 64));  // another type
}

TEST(PerfModel, AddReplacesTheSameKey) {
  ModelStore s;
  s.add(entry("r1", 64, 1e-6, 10e-6, 1e-8, 4e-6));
  s.add(entry("r1", 64, 2e-6, 10e-6, 1e-8, 4e-6));
  ASSERT_EQ(s.entries().size(), 1u);
  EXPECT_NEAR(s.entries()[0].model.k1, 2e-6, 1e-15);
}

TEST(PerfModel, JsonRoundTrip) {
  ModelStore s;
  s.add(entry("r1", 64, 1e-6, 10e-6, 1e-8, 4e-6));
  s.add(entry("r1", 512, 3e-6, 20e-6, 5e-8, 8e-6));
  auto path = std::filesystem::temp_directory_path() / "gpunfv_perf_model_test.json";
  s.save(path.string());
  ModelStore t = ModelStore::load(path.string());
  ASSERT_EQ(t.entries().size(), 2u);
  const ModelEntry& e = t.entries()[1];
  EXPECT_EQ(e.device, "NVIDIA H100");
  EXPECT_EQ(e.nf_name, "r1");
  EXPECT_EQ(e.packet_bytes, 512u);
  EXPECT_EQ(e.profile_sms, 8);
  EXPECT_NEAR(e.model.k1, 3e-6, 1e-15);
  EXPECT_NEAR(e.model.b2, 8e-6, 1e-12);
  EXPECT_EQ(e.kernel_samples.size(), 3u);
  EXPECT_NEAR(e.kernel_fit.r2, 1.0, 1e-9);
  std::filesystem::remove(path);
}

TEST(PerfModel, BadFilesAreConfigErrors) {
  auto dir = std::filesystem::temp_directory_path();
  EXPECT_THROW(ModelStore::load((dir / "gpunfv_no_such_model.json").string()), ConfigError);
  auto bad = dir / "gpunfv_bad_model.json";
  std::ofstream(bad) << "{ not json";
  EXPECT_THROW(ModelStore::load(bad.string()), ConfigError);
  std::ofstream(bad) << R"({"format": "gpunfv-perf-model/1", "models": [{"device": "x"}]})";
  try {
    ModelStore::load(bad.string());
    FAIL() << "a model without fields loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos);
  }
  std::ofstream(bad) << R"({"format": "other", "models": []})";
  EXPECT_THROW(ModelStore::load(bad.string()), ConfigError);
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace gpunfv
