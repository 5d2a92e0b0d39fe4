// ConfigNode's checks on the YAML itself: repeated keys, and input files named by a config line.
#include <gtest/gtest.h>

#include "core/config_node.h"

namespace gpunfv {
namespace {

std::string duplicate_error(const std::string& yaml) {
  try {
    reject_duplicate_keys(YAML::Load(yaml), "c.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigNode, RepeatedKeyNamesBothLines) {
  EXPECT_EQ(duplicate_error("a: 1\nb: 2\na: 3\n"), "c.yaml:3: duplicate key 'a' (first at line 1)");
}

TEST(ConfigNode, RepeatedKeyFoundInNestedMapsAndLists) {
  EXPECT_EQ(duplicate_error("ports:\n  - {name: a,\n     name: b}\n"),
            "c.yaml:3: duplicate key 'name' (first at line 2)");
  EXPECT_EQ(duplicate_error("s:\n  m:\n    x: 1\n    x: 2\n"), "c.yaml:4: duplicate key 'x' (first at line 3)");
}

TEST(ConfigNode, SameKeyInSeparateMapsIsFine) {
  EXPECT_EQ(duplicate_error("ports:\n  - {name: a}\n  - {name: b}\nname: c\n"), "");
}

TEST(ConfigNode, MissingInputFileFailsAtItsConfigLine) {
  ConfigNode n(YAML::Load("x: 1\nroutes: /nonexistent/r.routes\n"), "c.yaml");
  try {
    n.input_file("routes", "route file");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("c.yaml:2: /nonexistent/r.routes: cannot open route file", 0), 0u)
        << e.what();
  }
}

TEST(ConfigNode, ChildrenInheritTheInputLimitAndNameTheirLine) {
  ConfigNode root(YAML::Load("nfs:\n  - {name: a, rules: [x.rules,\n      y.rules]}\n"), "c.yaml");
  EXPECT_EQ(root.read_limit().max_bytes, kDefaultMaxInputFileMb << 20);
  root.set_max_input_bytes(5 << 20);
  const ConfigNode item = root["nfs"].items()[0];
  const ReadLimit second = item["rules"].items()[1].read_limit();
  EXPECT_EQ(second.max_bytes, 5u << 20);
  EXPECT_EQ(second.named_at, "c.yaml:3");
  EXPECT_EQ(item.get("name")->read_limit().max_bytes, 5u << 20);
  // A node built in code from parts of the file (a forward's route) keeps the limit too.
  YAML::Node built;
  built["routes"] = item["rules"].yaml();
  EXPECT_EQ(item.in_context(built)["routes"].read_limit().max_bytes, 5u << 20);
  EXPECT_EQ(item.in_context(built)["routes"].read_limit().named_at, "c.yaml:2");
}

}  // namespace
}  // namespace gpunfv
