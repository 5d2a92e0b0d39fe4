#include "nf/router/router.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parse.h"
#include "nf/router/route_file.h"
#include "reference_trie.h"
#include "tests/fixtures/frame_batch.h"
#include "tests/fixtures/frames.h"
#include "nf/router/router_logic.h"

namespace gpunfv {
namespace {

Ipv4Prefix prefix(const char* text) { return *parse_ipv4_prefix(text); }
uint32_t ip(const char* text) { return *parse_ipv4(text); }

using fixtures::arp_frame;
using fixtures::header_checksum;
using fixtures::Ipv4Fields;
using fixtures::ipv4_frame;
using fixtures::ipv6_frame;
using fixtures::FrameBatch;

// Routes 10/8 -> port 7, 10.1/16 -> port 3.
std::unique_ptr<Router> small_router() {
  return std::make_unique<Router>(
      "r1", std::vector<Route>{{prefix("10.0.0.0/8"), 0}, {prefix("10.1.0.0/16"), 1}},
      std::vector<uint16_t>{7, 3}, std::vector<std::string>{"p7", "p3"});
}

DropReason route_one(const Router& r, std::vector<uint8_t>& frame, uint16_t* out_port = nullptr) {
  FrameBatch b({frame});
  EXPECT_EQ(b.verdict(0), DropReason::none) << "frame does not parse";
  r.process(b.view(), 0, 1, 0);
  frame = b.frame(0);
  if (out_port) *out_port = b.out_port(0);
  return b.verdict(0);
}

TEST(Router, ForwardsDecrementsTtlAndChoosesPort) {
  auto r = small_router();
  Ipv4Fields h;
  h.dst = ip("10.1.2.3");
  h.ttl = 64;
  auto f = ipv4_frame(h);
  uint16_t port = 0;
  EXPECT_EQ(route_one(*r, f, &port), DropReason::none);
  EXPECT_EQ(port, 3);
  EXPECT_EQ(f[14 + 8], 63);
  h.ttl = 63;
  EXPECT_EQ(f, ipv4_frame(h));  // same bytes as a packet built with TTL 63

  h.dst = ip("10.2.0.1");
  f = ipv4_frame(h);
  EXPECT_EQ(route_one(*r, f, &port), DropReason::none);
  EXPECT_EQ(port, 7);
}

TEST(Router, PassedPacketMovesToTheNextNf) {
  auto r = small_router();
  Ipv4Fields h;
  h.dst = ip("10.0.0.1");
  FrameBatch b({ipv4_frame(h)});
  r->process(b.view(), 0, 1, 0);
  EXPECT_EQ(b.next_nf(0), 1);
  EXPECT_EQ(b.verdict(0), DropReason::none);
}

TEST(Router, TtlExpiredAtOneAndZero) {
  auto r = small_router();
  for (uint8_t ttl : {uint8_t(0), uint8_t(1)}) {
    Ipv4Fields h;
    h.dst = ip("10.1.2.3");
    h.ttl = ttl;
    auto f = ipv4_frame(h);
    const auto before = f;
    uint16_t port = 0;
    EXPECT_EQ(route_one(*r, f, &port), drop_reason(RouterDrop::ttl_expired)) << int(ttl);
    EXPECT_EQ(f, before);  // a dropped packet is left as it came
    EXPECT_EQ(port, kNoPort);
  }
  Ipv4Fields h;
  h.dst = ip("10.1.2.3");
  h.ttl = 2;
  auto f = ipv4_frame(h);
  EXPECT_EQ(route_one(*r, f), DropReason::none);
  EXPECT_EQ(f[14 + 8], 1);
}

TEST(Router, NoRoute) {
  auto r = small_router();
  Ipv4Fields h;
  h.dst = ip("11.0.0.1");
  auto f = ipv4_frame(h);
  EXPECT_EQ(route_one(*r, f), drop_reason(RouterDrop::no_route));
  h.ttl = 1;  // the route lookup comes before the TTL check
  f = ipv4_frame(h);
  EXPECT_EQ(route_one(*r, f), drop_reason(RouterDrop::no_route));
}

TEST(Router, NotIpv4) {
  auto r = small_router();
  std::vector<uint8_t> arp = arp_frame(), ipv6 = ipv6_frame(64);
  EXPECT_EQ(route_one(*r, arp), DropReason::not_ipv4);
  EXPECT_EQ(route_one(*r, ipv6), DropReason::not_ipv4);
}

TEST(Router, BadChecksum) {
  auto r = small_router();
  Ipv4Fields h;
  h.dst = ip("10.1.2.3");
  auto f = ipv4_frame(h);
  f[14 + 11] ^= 0x01;
  EXPECT_EQ(route_one(*r, f), drop_reason(RouterDrop::ipv4_bad_checksum));

  // The checksum covers the options too (IHL * 4 bytes).
  h.option_words = 3;
  f = ipv4_frame(h);
  f[14 + 20 + 5] ^= 0x40;
  EXPECT_EQ(route_one(*r, f), drop_reason(RouterDrop::ipv4_bad_checksum));
  f[14 + 20 + 5] ^= 0x40;
  EXPECT_EQ(route_one(*r, f), DropReason::none);
}

// RFC 1624 incremental update against a full recomputation: every TTL with many random
// headers (random fields, protocols, options), one batch per TTL.
TEST(Router, IncrementalChecksumEqualsFullRecompute) {
  Router r("r", std::vector<Route>{{prefix("0.0.0.0/0"), 0}}, {5}, {"p"});
  std::mt19937 rng(4242);
  for (int ttl = 0; ttl <= 255; ++ttl) {
    std::vector<std::vector<uint8_t>> frames;
    for (int i = 0; i < 512; ++i) {
      Ipv4Fields h;
      h.ttl = uint8_t(ttl);
      h.proto = uint8_t(i < 256 ? i : rng());
      h.tos = uint8_t(rng());
      h.id = uint16_t(rng());
      h.frag = uint16_t(rng() & 0x4000);
      h.src = rng();
      h.dst = rng();
      h.option_words = int(rng() % 11);
      frames.push_back(ipv4_frame(h));
    }
    FrameBatch b(frames);
    r.process(b.view(), 0, uint32_t(frames.size()), 0);
    for (uint32_t i = 0; i < frames.size(); ++i) {
      std::vector<uint8_t> out = b.frame(i);
      if (ttl <= 1) {
        ASSERT_EQ(b.verdict(i), drop_reason(RouterDrop::ttl_expired));
        ASSERT_EQ(out, frames[i]);
        continue;
      }
      ASSERT_EQ(b.verdict(i), DropReason::none);
      ASSERT_EQ(out[14 + 8], ttl - 1);
      size_t ihl = (out[14] & 0x0F) * 4u;
      uint16_t want = header_checksum(out, 14, ihl);
      uint16_t got = uint16_t((out[24] << 8) | out[25]);
      ASSERT_EQ(got, want) << "ttl " << ttl << " packet " << i;
    }
  }
}

// The one case where a careless incremental update goes wrong: the new checksum is 0x0000.
TEST(Router, IncrementalChecksumReachingZero) {
  Router r("r", std::vector<Route>{{prefix("0.0.0.0/0"), 0}}, {5}, {"p"});
  std::mt19937 rng(99);
  for (int i = 0; i < 2000; ++i) {
    Ipv4Fields h;
    h.ttl = uint8_t(2 + rng() % 254);
    h.proto = uint8_t(rng());
    h.src = rng();
    h.dst = rng();
    h.id = 0;
    // Choose the ID so that the header after the TTL decrement sums to 0xFFFF: checksum 0.
    Ipv4Fields after = h;
    after.ttl = uint8_t(h.ttl - 1);
    uint16_t c = header_checksum(ipv4_frame(after), 14, 20);
    h.id = uint16_t(c == 0xFFFF ? 0 : c);
    after.id = h.id;
    ASSERT_EQ(header_checksum(ipv4_frame(after), 14, 20), 0);
    auto f = ipv4_frame(h);
    ASSERT_EQ(route_one(r, f), DropReason::none);
    ASSERT_EQ(f, ipv4_frame(after));
  }
}

TEST(Router, DescribeCommandAndEgressPorts) {
  auto r = small_router();
  EXPECT_EQ(r->type(), "router");
  EXPECT_EQ(r->describe(), "router r1: 2 routes (0 tbl8 groups), 2 next-hop ports");
  EXPECT_EQ(r->command("lookup 10.1.9.9"), "10.1.9.9 -> p3 (port 3)");
  EXPECT_EQ(r->command("lookup 12.0.0.1"), "12.0.0.1: no route");
  EXPECT_EQ(r->egress_ports(), (std::vector<uint16_t>{3, 7}));
  EXPECT_EQ(r->route_count(), 2u);
  EXPECT_EQ(r->prefixes(), (std::vector<Ipv4Prefix>{prefix("10.0.0.0/8"), prefix("10.1.0.0/16")}));
}

// ---- from_config ----

const std::string kConfigFile = GPUNFV_SOURCE_DIR "/data/router/chain.yaml";  // for paths only

std::optional<uint16_t> port_id_of(const std::string& name) {
  if (name == "p1") return 0;
  if (name == "p2") return 1;
  return std::nullopt;
}

std::unique_ptr<Router> router_from(const std::string& yaml) {
  return Router::from_config(ConfigNode(YAML::Load(yaml), kConfigFile), port_id_of);
}

std::string config_error(const std::string& yaml) {
  try {
    router_from(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RouterConfig, RouteFileWithNextHops) {
  auto r = router_from("name: r1\ntype: router\nroutes: example.routes\n");
  EXPECT_EQ(r->name(), "r1");
  EXPECT_EQ(r->command("lookup 200.57.7.196"), "200.57.7.196 -> p1 (port 0)");
  EXPECT_EQ(r->command("lookup 200.57.7.194"), "200.57.7.194 -> p2 (port 1)");
  EXPECT_EQ(r->command("lookup 200.57.7.204"), "200.57.7.204 -> p1 (port 0)");
  EXPECT_EQ(r->command("lookup 64.69.76.21"), "64.69.76.21: no route");
  auto same = router_from("name: r1\nroutes: {file: example.routes}\n");
  EXPECT_EQ(same->prefixes(), r->prefixes());
}

TEST(RouterConfig, PrefixListWithSpread) {
  auto r = router_from(
      "name: r2\ntype: router\nroutes:\n  file: bart_ipv4_random5000.txt\n  spread: [p1, p2]\n");
  EXPECT_EQ(r->route_count(), 5000u);
  EXPECT_EQ(r->describe(), "router r2: 5000 routes (" +
                               std::to_string(r->table().tbl8_groups_used()) +
                               " tbl8 groups), 2 next-hop ports");
  // Every prefix's first and last address go where the spread hash of their longest match says.
  router_test::ReferenceTrie trie;
  for (const Ipv4Prefix& p : r->prefixes()) trie.insert(p, spread_index(p, 2));
  for (const Ipv4Prefix& p : r->prefixes()) {
    uint32_t last = p.addr | (p.len == 32 ? 0 : ~uint32_t(0) >> p.len);
    for (uint32_t addr : {p.addr, last}) {
      LpmResult want = trie.lookup(addr), got = r->table().ref().lookup(addr);
      ASSERT_TRUE(got.found);
      ASSERT_EQ(got.next_hop, want.next_hop) << format_ipv4(addr);
    }
  }
}

TEST(RouterConfig, Errors) {
  std::string m = config_error("name: r\ntype: router\nroutes: example.routes\nrotes: x\n");
  EXPECT_EQ(m.rfind(kConfigFile + ":4: unknown key 'rotes'", 0), 0u) << m;

  m = config_error("name: r\ntype: nat\nroutes: example.routes\n");
  EXPECT_EQ(m.rfind(kConfigFile + ":2: ", 0), 0u) << m;

  m = config_error("name: r\nroutes:\n  file: bart_ipv4_random5000.txt\n  spread: [p1, p9]\n");
  EXPECT_EQ(m.rfind(kConfigFile + ":4: unknown port 'p9'", 0), 0u) << m;

  m = config_error("name: r\nroutes:\n  file: bart_ipv4_random5000.txt\n  spread: []\n");
  EXPECT_NE(m.find("at least one port"), std::string::npos) << m;

  m = config_error("name: r\nroutes: {file: x.routes, weights: 3}\n");
  EXPECT_NE(m.find("unknown key 'weights'"), std::string::npos) << m;

  m = config_error("name: r\nroutes: missing.routes\n");
  EXPECT_NE(m.find("missing.routes: cannot open route file"), std::string::npos) << m;

  // A prefix list read as a route file: the first line lacks a next hop.
  m = config_error("name: r\nroutes: bart_ipv4_random5000.txt\n");
  EXPECT_NE(m.find("bart_ipv4_random5000.txt:1: missing next hop"), std::string::npos) << m;
}

TEST(Router, Tbl8ExhaustionFailsCleanly) {
  std::vector<Route> routes;
  for (uint32_t i = 0; i <= Dir24_8::kDefaultMaxTbl8Groups; ++i)
    routes.push_back(Route{Ipv4Prefix{i << 8, 32}, 0});
  EXPECT_THROW(Router("r", routes, {1}, {"p"}), std::length_error);
}

}  // namespace
}  // namespace gpunfv
