#include "nf/router/lpm_dir24_8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nf/router/route_file.h"
#include "reference_trie.h"

namespace gpunfv {
namespace {

Ipv4Prefix prefix(const char* text) {
  auto p = parse_ipv4_prefix(text);
  if (!p) throw std::invalid_argument(text);
  return *p;
}

uint32_t ip(const char* text) { return *parse_ipv4(text); }

// Looks `addr` up and returns the next hop, or -1 for no route.
int64_t hop(const Dir24_8& t, const char* addr) {
  LpmResult r = t.ref().lookup(ip(addr));
  return r.found ? int64_t(r.next_hop) : -1;
}

TEST(Dir24_8, EmptyTableHasNoRoute) {
  Dir24_8 t(std::vector<Route>{});
  EXPECT_EQ(hop(t, "0.0.0.0"), -1);
  EXPECT_EQ(hop(t, "10.1.2.3"), -1);
  EXPECT_EQ(hop(t, "255.255.255.255"), -1);
  EXPECT_EQ(t.tbl8_groups_used(), 0u);
}

TEST(Dir24_8, DefaultRouteCoversEverything) {
  Dir24_8 t(std::vector<Route>{{prefix("0.0.0.0/0"), 7}});
  EXPECT_EQ(hop(t, "0.0.0.0"), 7);
  EXPECT_EQ(hop(t, "127.0.0.1"), 7);
  EXPECT_EQ(hop(t, "255.255.255.255"), 7);
}

TEST(Dir24_8, HostRouteMatchesOnlyItsAddress) {
  Dir24_8 t(std::vector<Route>{{prefix("198.51.100.7/32"), 3}});
  EXPECT_EQ(hop(t, "198.51.100.7"), 3);
  EXPECT_EQ(hop(t, "198.51.100.6"), -1);
  EXPECT_EQ(hop(t, "198.51.100.8"), -1);
  EXPECT_EQ(t.tbl8_groups_used(), 1u);
}

TEST(Dir24_8, HostRouteUnderDefaultRoute) {
  Dir24_8 t(std::vector<Route>{{prefix("198.51.100.7/32"), 3}, {prefix("0.0.0.0/0"), 1}});
  EXPECT_EQ(hop(t, "198.51.100.7"), 3);
  EXPECT_EQ(hop(t, "198.51.100.6"), 1);  // tbl8 group inherits the default route
  EXPECT_EQ(hop(t, "8.8.8.8"), 1);
}

// Nested /8 /16 /24 /25 /32, in both insertion orders.
TEST(Dir24_8, OverlappingPrefixesLongestWins) {
  std::vector<Route> routes = {{prefix("10.0.0.0/8"), 1},
                               {prefix("10.1.0.0/16"), 2},
                               {prefix("10.1.2.0/24"), 3},
                               {prefix("10.1.2.128/25"), 4},
                               {prefix("10.1.2.200/32"), 5}};
  for (int order = 0; order < 2; ++order) {
    if (order == 1) std::reverse(routes.begin(), routes.end());
    Dir24_8 t(routes);
    EXPECT_EQ(hop(t, "9.255.255.255"), -1);
    EXPECT_EQ(hop(t, "10.0.0.0"), 1);
    EXPECT_EQ(hop(t, "10.0.255.255"), 1);
    EXPECT_EQ(hop(t, "10.1.0.0"), 2);
    EXPECT_EQ(hop(t, "10.1.1.255"), 2);
    EXPECT_EQ(hop(t, "10.1.2.0"), 3);
    EXPECT_EQ(hop(t, "10.1.2.127"), 3);
    EXPECT_EQ(hop(t, "10.1.2.128"), 4);
    EXPECT_EQ(hop(t, "10.1.2.199"), 4);
    EXPECT_EQ(hop(t, "10.1.2.200"), 5);
    EXPECT_EQ(hop(t, "10.1.2.201"), 4);
    EXPECT_EQ(hop(t, "10.1.2.255"), 4);
    EXPECT_EQ(hop(t, "10.1.3.0"), 2);
    EXPECT_EQ(hop(t, "10.2.0.0"), 1);
    EXPECT_EQ(hop(t, "11.0.0.0"), -1);
    EXPECT_EQ(t.tbl8_groups_used(), 1u);  // the /25 and /32 share one group
  }
}

// A /24 and a longer prefix inside it share one tbl24 entry: the entry becomes a tbl8 group
// that keeps the /24 everywhere the longer prefix does not cover.
TEST(Dir24_8, Tbl8SpillKeepsTheShorterPrefix) {
  Dir24_8 t(std::vector<Route>{{prefix("192.168.1.64/26"), 2}, {prefix("192.168.1.0/24"), 1}});
  EXPECT_EQ(hop(t, "192.168.1.0"), 1);
  EXPECT_EQ(hop(t, "192.168.1.63"), 1);
  EXPECT_EQ(hop(t, "192.168.1.64"), 2);
  EXPECT_EQ(hop(t, "192.168.1.127"), 2);
  EXPECT_EQ(hop(t, "192.168.1.128"), 1);
  EXPECT_EQ(hop(t, "192.168.1.255"), 1);
  EXPECT_EQ(hop(t, "192.168.0.255"), -1);
  EXPECT_EQ(hop(t, "192.168.2.0"), -1);
  EXPECT_EQ(t.tbl8_groups_used(), 1u);
}

TEST(Dir24_8, Tbl8SpillUnderShorterThan24) {
  // The /28's group is filled with the /20 that covers its /24.
  Dir24_8 t(std::vector<Route>{{prefix("172.16.0.0/20"), 1}, {prefix("172.16.5.16/28"), 2}});
  EXPECT_EQ(hop(t, "172.16.5.15"), 1);
  EXPECT_EQ(hop(t, "172.16.5.16"), 2);
  EXPECT_EQ(hop(t, "172.16.5.31"), 2);
  EXPECT_EQ(hop(t, "172.16.5.32"), 1);
  EXPECT_EQ(hop(t, "172.16.15.255"), 1);
  EXPECT_EQ(hop(t, "172.16.16.0"), -1);
}

TEST(Dir24_8, LongPrefixWithoutCoveringRoute) {
  Dir24_8 t(std::vector<Route>{{prefix("203.0.113.8/29"), 4}, {prefix("203.0.113.254/31"), 5}});
  EXPECT_EQ(hop(t, "203.0.113.7"), -1);
  EXPECT_EQ(hop(t, "203.0.113.8"), 4);
  EXPECT_EQ(hop(t, "203.0.113.15"), 4);
  EXPECT_EQ(hop(t, "203.0.113.16"), -1);
  EXPECT_EQ(hop(t, "203.0.113.253"), -1);
  EXPECT_EQ(hop(t, "203.0.113.254"), 5);
  EXPECT_EQ(hop(t, "203.0.113.255"), 5);
}

TEST(Dir24_8, RepeatedPrefixLaterRouteWins) {
  Dir24_8 t(std::vector<Route>{{prefix("10.0.0.0/8"), 1},
                               {prefix("10.9.9.9/32"), 1},
                               {prefix("10.0.0.0/8"), 2},
                               {prefix("10.9.9.9/32"), 3}});
  EXPECT_EQ(hop(t, "10.0.0.1"), 2);
  EXPECT_EQ(hop(t, "10.9.9.9"), 3);
}

TEST(Dir24_8, LargestNextHopIndex) {
  Dir24_8 t(std::vector<Route>{{prefix("1.2.3.4/32"), lpm::kMaxNextHop}});
  EXPECT_EQ(hop(t, "1.2.3.4"), int64_t(lpm::kMaxNextHop));
}

TEST(Dir24_8, RejectsBadRoutes) {
  EXPECT_THROW(Dir24_8(std::vector<Route>{{prefix("1.0.0.0/8"), lpm::kMaxNextHop + 1}}),
               std::invalid_argument);
  EXPECT_THROW(Dir24_8(std::vector<Route>{{Ipv4Prefix{ip("1.2.3.4"), 8}, 0}}),
               std::invalid_argument);
  EXPECT_THROW(Dir24_8(std::vector<Route>{{Ipv4Prefix{0, 33}, 0}}), std::invalid_argument);
}

TEST(Dir24_8, RunningOutOfTbl8GroupsFailsCleanly) {
  std::vector<Route> routes = {{prefix("10.0.0.0/25"), 0},
                               {prefix("10.0.0.128/25"), 1},  // same /24: same group
                               {prefix("10.0.1.0/25"), 2}};
  EXPECT_NO_THROW(Dir24_8(routes, 2));
  routes.push_back({prefix("10.0.2.0/30"), 3});
  try {
    Dir24_8 t(routes, 2);
    FAIL() << "expected std::length_error";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("out of tbl8 groups (capacity 2)"), std::string::npos)
        << e.what();
  }
}

// Against the reference trie on the real full table (901,899 prefixes; next hop = line index).
class LpmFullTable : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    prefixes_ = new std::vector<Ipv4Prefix>(
        read_prefix_file(GPUNFV_SOURCE_DIR "/data/router/bart_fulltable_ipv4_prefixes.txt.gz"));
    std::vector<Route> routes;
    routes.reserve(prefixes_->size());
    trie_ = new router_test::ReferenceTrie();
    for (uint32_t i = 0; i < prefixes_->size(); ++i) {
      routes.push_back(Route{(*prefixes_)[i], i});
      trie_->insert((*prefixes_)[i], i);
    }
    table_ = new Dir24_8(routes);
  }
  static void TearDownTestSuite() {
    delete table_;
    delete trie_;
    delete prefixes_;
  }

  // Compares both at `addr`; returns false (and records a failure) on the first mismatch.
  static bool agree(uint32_t addr) {
    LpmResult want = trie_->lookup(addr);
    LpmResult got = table_->ref().lookup(addr);
    if (want.found == got.found && (!want.found || want.next_hop == got.next_hop)) return true;
    ADD_FAILURE() << format_ipv4(addr) << ": trie " << (want.found ? int64_t(want.next_hop) : -1)
                  << ", DIR-24-8 " << (got.found ? int64_t(got.next_hop) : -1);
    return false;
  }

  static std::vector<Ipv4Prefix>* prefixes_;
  static router_test::ReferenceTrie* trie_;
  static Dir24_8* table_;
};
std::vector<Ipv4Prefix>* LpmFullTable::prefixes_ = nullptr;
router_test::ReferenceTrie* LpmFullTable::trie_ = nullptr;
Dir24_8* LpmFullTable::table_ = nullptr;

TEST_F(LpmFullTable, LoadsAllPrefixes) {
  EXPECT_EQ(prefixes_->size(), 901899u);
  EXPECT_EQ(table_->tbl8_groups_used(), 451u);  // distinct /24 blocks holding a /25../32
}

TEST_F(LpmFullTable, UniformRandomAddresses) {
  std::mt19937 rng(12345);
  size_t found = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    uint32_t addr = rng();
    if (!agree(addr)) return;
    found += table_->ref().lookup(addr).found;
  }
  EXPECT_GT(found, 100'000u);  // the table covers a good part of the address space
}

TEST_F(LpmFullTable, AddressesInsideRandomPrefixes) {
  std::mt19937 rng(777);
  std::uniform_int_distribution<size_t> pick(0, prefixes_->size() - 1);
  for (int i = 0; i < 1'000'000; ++i) {
    const Ipv4Prefix& p = (*prefixes_)[pick(rng)];
    uint32_t host_mask = p.len == 32 ? 0 : ~uint32_t(0) >> p.len;
    uint32_t addr = p.addr | (rng() & host_mask);
    if (!agree(addr)) return;
    ASSERT_TRUE(table_->ref().lookup(addr).found);
  }
}

TEST_F(LpmFullTable, EdgesOfEveryPrefix) {
  for (const Ipv4Prefix& p : *prefixes_) {
    uint32_t last = p.addr | (p.len == 32 ? 0 : ~uint32_t(0) >> p.len);
    if (!agree(p.addr) || !agree(last) || !agree(p.addr - 1) || !agree(last + 1)) return;
  }
}

TEST_F(LpmFullTable, EveryLongPrefixHost) {
  // Every address of every /25../32 block, where tbl8 groups are in play.
  for (const Ipv4Prefix& p : *prefixes_) {
    if (p.len <= 24) continue;
    for (uint32_t low = 0; low < 256; ++low)
      if (!agree((p.addr & ~0xFFu) | low)) return;
  }
}

}  // namespace
}  // namespace gpunfv
