// Loading a configuration: errors name the file and line at fault.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "core/error.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

TEST(RuntimeConfig, ErrorsNameFileAndLine) {
  auto dir = temp_dir("cfgerr");
  std::string cfg = write_file(dir / "c.yaml", R"(ports:
  - {name: in, type: pcap, rx: )" + source_dir() + R"(/data/traces/dns.cap}
chains:
  - {from: in, path: [nope]}
)");
  try {
    load_runtime_config(cfg);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown NF 'nope'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpunfv
