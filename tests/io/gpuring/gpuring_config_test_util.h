// For the gpuring port's configuration tests: parsing `yaml` must fail with a ConfigError whose
// message holds `fragment` and names /tmp/cfg.yaml:`line` (test::yaml_node's file name).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../port_test_util.h"
#include "core/error.h"
#include "io/gpuring/gpuring_config.h"

namespace gpunfv::gpuring::test_util {

inline void expect_config_error(const std::string& yaml, const std::string& fragment, int line) {
  try {
    GpuRingConfig::parse(::gpunfv::test::yaml_node(yaml));
    FAIL() << "no ConfigError for: " << yaml;
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_NE(msg.find("/tmp/cfg.yaml:" + std::to_string(line)), std::string::npos) << msg;
  }
}

}  // namespace gpunfv::gpuring::test_util
