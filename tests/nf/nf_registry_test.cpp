// The NF registry: the built-in NFs registered by their own one line, lookups, and a second
// registration of a name refused.
#include "nf/nf_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "nf/router/router.h"

namespace gpunfv {
namespace {

std::unique_ptr<NetworkFunction> make_nothing(const ConfigNode&, const NfContext&) { return nullptr; }

TEST(NfRegistry, BuiltInNfsAreRegistered) {
  const auto types = NfRegistry::types();
  for (const char* t : {"firewall", "ipsec", "nids", "router"})
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  EXPECT_EQ(NfRegistry::find("no-such-nf"), nullptr);
  EXPECT_NE(known_nf_types().find("firewall, ipsec, nids, router"), std::string::npos);
}

TEST(NfRegistry, ATakenNameKeepsItsFirstFactory) {
  NfFactory firewall = NfRegistry::find("firewall");
  ASSERT_NE(firewall, nullptr);
  EXPECT_FALSE(NfRegistry::add("firewall", &make_nothing));
  EXPECT_EQ(NfRegistry::find("firewall"), firewall);
}

TEST(NfRegistry, TheFactoryBuildsTheNfWithTheChainsPorts) {
  // The router names egress ports: its factory gets the context's port lookup.
  const auto dir = std::filesystem::temp_directory_path() / "gpunfv_nf_registry_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "routes.txt") << "10.0.0.0/8 out\n";
  NfFactory make = NfRegistry::find("router");
  ASSERT_NE(make, nullptr);
  NfContext ctx{[](const std::string& port) -> std::optional<uint16_t> {
    if (port == "out") return 3;
    return std::nullopt;
  }};
  auto nf = make(ConfigNode(YAML::Load("name: r\ntype: router\nroutes: routes.txt\n"),
                            (dir / "c.yaml").string()),
                 ctx);
  ASSERT_NE(nf, nullptr);
  auto* router = dynamic_cast<Router*>(nf.get());
  ASSERT_NE(router, nullptr);
  EXPECT_EQ(nf->name(), "r");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpunfv
