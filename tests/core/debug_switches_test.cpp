// The debug switches: one place reads every GPUNFV_* variable, values are checked, and the
// table in docs/configuration.md lists exactly the variables read.
#include "core/debug_switches.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/scoped_env.h"

namespace gpunfv {
namespace {

using testing::ScopedEnv;

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(DebugSwitches, ValuesAreRead) {
  ScopedEnv a("GPUNFV_DEBUG_SKIP_COLLECT", "1"), b("GPUNFV_DEBUG_FULL_DOWNLOAD", "0"),
      c("GPUNFV_DEBUG_REPLAN_MS", "25"), d("GPUNFV_NIDS_LANES", "16"), e("GPUNFV_NO_GREEN_CONTEXTS", ""),
      f("GPUNFV_DEBUG_FLOW", "1"), g("GPUNFV_IPSEC_LANES", "2"), h("GPUNFV_NIDS_CHUNK", "8"),
      i("GPUNFV_DEBUG_SWITCH_KERNELS", "1");
  const DebugSwitches s = debug_switches();
  EXPECT_TRUE(s.skip_collect);
  EXPECT_FALSE(s.full_download);
  EXPECT_EQ(s.replan_ms, 25u);
  EXPECT_EQ(s.nids_lanes, 16u);
  EXPECT_EQ(s.ipsec_lanes, 2u);
  EXPECT_EQ(s.nids_chunk, 8u);
  EXPECT_FALSE(s.no_green_contexts);
  EXPECT_TRUE(s.flow);
  EXPECT_TRUE(s.switch_kernels);
}

TEST(DebugSwitches, ReadAgainOnEveryCall) {
  {
    ScopedEnv a("GPUNFV_DEBUG_COUNTS_BY_COPY", "1");
    EXPECT_TRUE(debug_switches().counts_by_copy);
  }
  ScopedEnv a("GPUNFV_DEBUG_COUNTS_BY_COPY", "0");
  EXPECT_FALSE(debug_switches().counts_by_copy);
}

TEST(DebugSwitches, BadValuesAreErrorsNamingTheVariable) {
  const std::pair<const char*, const char*> bad[] = {
      {"GPUNFV_DEBUG_SKIP_COLLECT", "yes"}, {"GPUNFV_DEBUG_UPLOAD_PREFIX", "2"},
      {"GPUNFV_DEBUG_REPLAN_MS", "abc"},    {"GPUNFV_DEBUG_REPLAN_MS", "-5"},
      {"GPUNFV_DEBUG_REPLAN_MS", "99999999999999999999"}, {"GPUNFV_NIDS_LANES", "12"},
      {"GPUNFV_NIDS_LANES", "64"},          {"GPUNFV_NO_GREEN_CONTEXTS", "true"},
      {"GPUNFV_IPSEC_LANES", "3"},          {"GPUNFV_IPSEC_LANES", "16"},
      {"GPUNFV_NIDS_CHUNK", "12"},          {"GPUNFV_NIDS_CHUNK", "128"},
      {"GPUNFV_DEBUG_SWITCH_KERNELS", "on"},
  };
  for (const auto& [name, value] : bad) {
    ScopedEnv e(name, value);
    try {
      debug_switches();
      ADD_FAILURE() << name << "=" << value << " was taken";
    } catch (const ConfigError& err) {
      EXPECT_NE(std::string(err.what()).find(name), std::string::npos) << err.what();
      EXPECT_NE(std::string(err.what()).find(value), std::string::npos) << err.what();
    }
  }
}

TEST(DebugSwitches, OnlyThisFileReadsGpunfvVariables) {
  namespace fs = std::filesystem;
  const fs::path root = testing::source_dir();
  const std::regex getenv_gpunfv(R"(getenv\s*\(\s*"GPUNFV_)");
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), root).generic_string();
    EXPECT_FALSE(std::regex_search(read(e.path()), getenv_gpunfv))
        << rel << " reads a GPUNFV_ variable itself: add it to core/debug_switches.h";
    ++files;
  }
  EXPECT_GT(files, 100u);
}

TEST(DebugSwitches, TheDocsTableListsExactlyTheVariablesRead) {
  const std::string doc = read(std::filesystem::path(testing::source_dir()) / "docs/configuration.md");
  const std::regex row(R"(\n\| `(GPUNFV_[A-Z_]+))");
  std::set<std::string> documented, read_here;
  for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) documented.insert((*it)[1]);
  for (const DebugSwitchDoc& d : debug_switch_docs()) {
    read_here.insert(std::string(d.name));
    EXPECT_NE(doc.find(std::string(d.effect)), std::string::npos) << d.name << ": the docs say something else";
  }
  EXPECT_EQ(documented, read_here);
  EXPECT_FALSE(read_here.empty());
  // And each is read: a value no switch takes stops debug_switches().
  for (const std::string& name : read_here) {
    ScopedEnv e(name.c_str(), "x");
    EXPECT_THROW(debug_switches(), ConfigError) << name << " is documented but not read";
  }
}

}  // namespace
}  // namespace gpunfv
