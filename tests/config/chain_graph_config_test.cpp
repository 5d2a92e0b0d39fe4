// Chain graphs as parsed from a chain's `path:` and `routes:`.
#include "config/internal/chain_graph_config.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/config_node.h"
#include "core/error.h"

namespace gpunfv {
namespace {

const std::map<std::string, uint16_t> kNfs = {{"a", 0}, {"b", 1}, {"c", 2}, {"d", 3}, {"e", 4}};

ChainGraph parse(const std::string& yaml) {
  return parse_chain_graph(ConfigNode(YAML::Load(yaml), "chain.yaml"), kNfs);
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ChainGraph, StraightPath) {
  ChainGraph g = parse("{path: [c, a, e]}");
  EXPECT_EQ(g.nf, (std::vector<uint16_t>{2, 0, 4}));
  ASSERT_EQ(g.next.size(), 3u);
  EXPECT_EQ(g.next[0], (std::vector<uint8_t>{1}));
  EXPECT_EQ(g.next[1], (std::vector<uint8_t>{2}));
  EXPECT_TRUE(g.next[2].empty());
  EXPECT_EQ(g.parents()[2], (std::vector<uint8_t>{1}));
}

TEST(ChainGraph, BranchesAndRoutes) {
  ChainGraph g = parse(R"({path: [a, {nf: b, next: [c, d]}, {nf: c, next: [e]}, d, e],
    routes: [{dst: 198.19.0.0/16, at: ingress, next: b},
             {dst: 198.18.128.0/17, at: a, next: done},
             {dst: 198.18.0.0/15, at: b, next: e}]})");
  EXPECT_EQ(g.next[1], (std::vector<uint8_t>{2, 3}));
  EXPECT_EQ(g.next[2], (std::vector<uint8_t>{4}));
  EXPECT_EQ(g.next[3], (std::vector<uint8_t>{4}));
  ASSERT_EQ(g.routes.size(), 3u);
  EXPECT_EQ(g.routes[0].len, 17);  // longest prefix first
  EXPECT_EQ(g.routes[0].next, kChainDone);
  EXPECT_EQ(g.routes[2].len, 15);
  EXPECT_EQ(g.routes[1].at, kAtIngress);
  auto parents = g.parents();
  EXPECT_EQ(parents[4], (std::vector<uint8_t>{1, 2, 3}));
}

TEST(ChainGraph, Errors) {
  EXPECT_NE(error_of("{path: [a, x]}").find("unknown NF 'x'"), std::string::npos);
  EXPECT_NE(error_of("{path: [a, a]}").find("appears twice"), std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: [a]}]}").find("targets must come later"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: [z]}]}").find("not an NF of this chain"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: []}]}").find("at least one target"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, next: [c, c]}, c]}").find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, {nf: b, when: 1}]}").find("when"), std::string::npos);
  EXPECT_NE(error_of("{path: [a, b], routes: [{dst: 10.0.0.1/8, next: b}]}").find("host bits"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, b], routes: [{dst: 10.0.0.0/8, at: b, next: a}]}").find("later"),
            std::string::npos);
  EXPECT_NE(error_of("{path: [a, b], routes: [{dst: 10.0.0.0/8, at: q, next: b}]}").find("ingress"),
            std::string::npos);
  EXPECT_EQ(error_of("{path: [a, {nf: b, next: done}, c]}"), "");
}

}  // namespace
}  // namespace gpunfv
