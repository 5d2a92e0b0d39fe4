// A NIDS's rule set replaced while it runs: the next batch is scanned by the new automaton,
// rule indices in the results stay unique across versions (so collect() names the rule of the
// version that scanned a packet), packets are counted per version, and a bad file changes
// nothing.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "nf/nids/nids.h"
#include "tests/chain/chain_test_util.h"
#include "tests/nf/nids/nids_test_util.h"

namespace gpunfv {
namespace {

using namespace nids_testing;
using testing::temp_dir;
using testing::write_file;

TEST(NidsReplace, NewRulesScanTheNextBatchWithGlobalRuleIndices) {
  const auto dir = temp_dir("nids-replace");
  const std::string v1 = write_file(dir / "v1.rules",
      "alert tcp any any -> any any (msg:\"one\"; content:\"alpha\"; sid:11;)\n"
      "alert tcp any any -> any any (msg:\"two\"; content:\"beta\"; sid:12;)\n");
  const std::string v2 = write_file(dir / "v2.rules",
      "alert tcp any any -> any any (msg:\"three\"; content:\"gamma\"; sid:13;)\n");
  auto nids = Nids::from_config(ConfigNode(YAML::Load("name: ids\ntype: nids\nrules: v1.rules\n"),
                                           (dir / "c.yaml").string()));
  nids->prepare(Backend::cpu);
  const std::vector<std::vector<uint8_t>> frames = {tcp_frame("xx beta"), tcp_frame("gamma alpha")};

  auto b1 = run_cpu(*nids, frames);
  EXPECT_EQ(result_of(*b1, 0).rules[0], 1u);  // "two"
  EXPECT_EQ(result_of(*b1, 1).rules[0], 0u);  // "one"; gamma is not a rule yet

  EXPECT_EQ(nids->replace_rules({v2}, {}), 2u);
  EXPECT_EQ(nids->rules().rules.size(), 1u);
  auto b2 = run_cpu(*nids, frames);
  EXPECT_EQ(result_of(*b2, 0).fired, 0u);
  ASSERT_EQ(result_of(*b2, 1).fired, 1u);
  EXPECT_EQ(result_of(*b2, 1).rules[0], 2u);  // after version 1's two rules

  // Collected after the swap, each batch's alerts still name the rules that fired then.
  nids->collect(b1->view(), 0, {});
  nids->collect(b2->view(), 0, {});
  nlohmann::json j;
  nids->report(j);
  EXPECT_EQ(j["alerts"], 3);
  EXPECT_EQ(j["alerts_by_sid"], (nlohmann::json{{"11", 1}, {"12", 1}, {"13", 1}}));
  ASSERT_EQ(j["table_versions"].size(), 2u);
  EXPECT_EQ(j["table_versions"][0]["packets"], 2);
  EXPECT_EQ(j["table_versions"][1]["packets"], 2);
  EXPECT_EQ(j["table_versions"][1]["change"], "nids replace " + v2);
  EXPECT_EQ(j["table_versions"][1]["entries"], 1);
}

TEST(NidsReplace, BadFilesAreRefusedAndTheLiveRulesKept) {
  const auto dir = temp_dir("nids-replace-bad");
  const std::string v1 = write_file(dir / "v1.rules",
      "alert tcp any any -> any any (msg:\"one\"; content:\"alpha\"; sid:11;)\n");
  const std::string bad = write_file(dir / "bad.rules",
      "alert tcp any any -> any any (msg:\"ok\"; content:\"x\"; sid:1;)\n"
      "alert tcp any any -> any any (msg:\"broken\"; content:\"y\" sid:2;)\n");
  const std::string none = write_file(dir / "none.rules", "# nothing\n");
  const std::string many = write_file(dir / "many.rules",
      "alert tcp any any -> any any (msg:\"a\"; content:\"aa\"; sid:1;)\n"
      "alert tcp any any -> any any (msg:\"b\"; content:\"bb\"; sid:2;)\n");
  auto nids = Nids::from_config(ConfigNode(
      YAML::Load("name: ids\ntype: nids\nrules: v1.rules\nmax_rules: 1\n"), (dir / "c.yaml").string()));
  nids->prepare(Backend::cpu);
  auto refused = [&](const std::string& file) -> std::string {
    try {
      nids->replace_rules({file}, {});
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refused(bad).find(bad + ":2:"), std::string::npos) << refused(bad);
  EXPECT_NE(refused(none).find("no rule could be loaded"), std::string::npos);
  EXPECT_NE(refused(many).find(many + ":2:"), std::string::npos) << refused(many);
  EXPECT_NE(refused((dir / "missing.rules").string()).find("missing.rules"), std::string::npos);
  EXPECT_EQ(nids->table_version(), 1u);
  EXPECT_EQ(nids->rules().rules[0].sid, 11u);
  EXPECT_EQ(run_cpu(*nids, {tcp_frame("alpha")})->view().results.framework_data()[0], 1u);
}

}  // namespace
}  // namespace gpunfv
