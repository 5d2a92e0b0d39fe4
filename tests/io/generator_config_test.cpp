#include "io/generator_config.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "port_test_util.h"

namespace gpunfv {
namespace {

using test::yaml_node;

// Parses `value` as it appears on line 2 of a config file.
GeneratorRate rate(const std::string& value) {
  return parse_generator_rate(yaml_node("name: gen\nrate: \"" + value + "\"\n")["rate"]);
}

FrameSizes sizes(const std::string& value) {
  return parse_frame_sizes(yaml_node("name: gen\nsize: \"" + value + "\"\n")["size"]);
}

TEST(GeneratorConfig, ParsesPacketRates) {
  using U = GeneratorRate::Unit;
  EXPECT_EQ(rate("10Mpps").unit, U::packets_per_sec);
  EXPECT_DOUBLE_EQ(rate("10Mpps").per_sec, 10e6);
  EXPECT_DOUBLE_EQ(rate("500kpps").per_sec, 500e3);
  EXPECT_DOUBLE_EQ(rate("1000pps").per_sec, 1000);
  EXPECT_DOUBLE_EQ(rate("1.5Mpps").per_sec, 1.5e6);
  EXPECT_DOUBLE_EQ(rate("2Gpps").per_sec, 2e9);
}

TEST(GeneratorConfig, ParsesBitRates) {
  using U = GeneratorRate::Unit;
  EXPECT_EQ(rate("40Gbps").unit, U::bits_per_sec);
  EXPECT_DOUBLE_EQ(rate("40Gbps").per_sec, 40e9);
  EXPECT_DOUBLE_EQ(rate("100Mbps").per_sec, 100e6);
  EXPECT_DOUBLE_EQ(rate("2.5Gbps").per_sec, 2.5e9);
  EXPECT_DOUBLE_EQ(rate("64kbps").per_sec, 64e3);
}

TEST(GeneratorConfig, ZeroIsUnlimited) {
  EXPECT_EQ(rate("0").unit, GeneratorRate::Unit::unlimited);
  EXPECT_EQ(rate("0Mpps").unit, GeneratorRate::Unit::unlimited);
}

TEST(GeneratorConfig, BadRatesNameFileAndLine) {
  for (const char* bad : {"10", "fast", "10Mbit", "-5pps", "Mpps", "10 Mpps", "10mpps", "10Xpps",
                          "", "nanpps", "1e400pps"}) {
    try {
      rate(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("/tmp/cfg.yaml:2"), std::string::npos) << e.what();
    }
  }
}

TEST(GeneratorConfig, ParsesFrameSizes) {
  FrameSizes fixed = sizes("64");
  EXPECT_EQ(fixed.kind, FrameSizes::Kind::fixed);
  EXPECT_EQ(fixed.min, 64u);
  EXPECT_EQ(fixed.max, 64u);
  FrameSizes imix = sizes("imix");
  EXPECT_EQ(imix.kind, FrameSizes::Kind::imix);
  EXPECT_EQ(imix.min, 64u);
  EXPECT_EQ(imix.max, 1518u);
  FrameSizes range = sizes("64-1518");
  EXPECT_EQ(range.kind, FrameSizes::Kind::range);
  EXPECT_EQ(range.min, 64u);
  EXPECT_EQ(range.max, 1518u);
  EXPECT_EQ(sizes("9000").max, 9000u);
}

TEST(GeneratorConfig, BadFrameSizes) {
  for (const char* bad : {"32", "1518-64", "abc", "64-", "-64", "64-99999", "0", "IMIX", " 64"}) {
    EXPECT_THROW(sizes(bad), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace gpunfv
