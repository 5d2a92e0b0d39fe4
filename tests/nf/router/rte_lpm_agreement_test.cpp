// DPDK's rte_lpm (bench/peers) and our Dir24_8 must agree on every lookup: found or not, and
// the next hop. Compiled only when CMake found libdpdk.
#if GPUNFV_HAVE_DPDK

#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nf/router/lpm_dir24_8.h"
#include "nf/router/route_file.h"
#include "nf/router/live_routes.h"
#include "route_sequence.h"
#include "peers/rte_lpm_peer.h"

namespace gpunfv {
namespace {

Ipv4Prefix prefix(const char* text) {
  auto p = parse_ipv4_prefix(text);
  if (!p) throw std::invalid_argument(text);
  return *p;
}

// Builds the peer. A missing privilege (which these tests cannot grant themselves) skips with
// the EAL's message; any other failure to bring up the EAL or build the table fails the test.
#define MAKE_PEER_OR_RETURN(peer, routes)                                                   \
  std::unique_ptr<RteLpmPeer> peer;                                                        \
  try {                                                                                    \
    peer = std::make_unique<RteLpmPeer>(routes);                                           \
  } catch (const DpdkError& e) {                                                           \
    if (e.rte_errno() == EACCES || e.rte_errno() == EPERM) GTEST_SKIP() << e.what();       \
    FAIL() << e.what();                                                                    \
  }

// Looks `addrs` up in both; returns the number of disagreements, reporting the first few.
size_t disagreements(const Dir24_8& ours, const RteLpmPeer& peer,
                     const std::vector<uint32_t>& addrs) {
  std::vector<uint32_t> hops(addrs.size());
  std::unique_ptr<bool[]> found(new bool[addrs.size()]);
  peer.lookup_bulk(addrs.data(), hops.data(), found.get(), addrs.size());
  Dir24_8Ref ref = ours.ref();
  size_t bad = 0;
  for (size_t i = 0; i < addrs.size(); ++i) {
    LpmResult r = ref.lookup(addrs[i]);
    if (r.found == found[i] && (!r.found || r.next_hop == hops[i])) continue;
    if (++bad <= 5)
      ADD_FAILURE() << format_ipv4(addrs[i]) << ": DIR-24-8 "
                    << (r.found ? int64_t(r.next_hop) : -1) << ", rte_lpm "
                    << (found[i] ? int64_t(hops[i]) : -1);
  }
  return bad;
}

TEST(RteLpmAgreement, EalIsUpAndThreadsAreNotPinned) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  std::vector<Route> routes = {{prefix("10.0.0.0/8"), 1}};
  MAKE_PEER_OR_RETURN(peer, routes);
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after))
      << "CPUs before EAL init: " << CPU_COUNT(&before) << ", after: " << CPU_COUNT(&after)
      << " (EAL arguments: " << dpdk_eal_args() << ")";
}

// /0, /32, nested /8 /16 /24 /25 /32, a /1 over the default route's /1 half, a repeated
// prefix (the later wins), in both orders.
TEST(RteLpmAgreement, SmallTableWithDefaultHostAndNestedRoutes) {
  const std::vector<Route> base = {
      {prefix("0.0.0.0/0"), 9},        {prefix("10.0.0.0/8"), 1},      {prefix("10.1.0.0/16"), 2},
      {prefix("10.1.2.0/24"), 3},      {prefix("10.1.2.128/25"), 4},   {prefix("10.1.2.200/32"), 5},
      {prefix("198.51.100.7/32"), 6},  {prefix("128.0.0.0/1"), 7},     {prefix("0.0.0.0/32"), 12},
      {prefix("255.255.255.255/32"), 11}};
  for (int order = 0; order < 2; ++order) {
    std::vector<Route> routes = base;
    if (order == 1) std::reverse(routes.begin(), routes.end());
    routes.push_back({prefix("203.0.113.0/24"), 8});
    routes.push_back({prefix("203.0.113.0/24"), 10});  // the later wins
    Dir24_8 ours(routes);
    MAKE_PEER_OR_RETURN(peer, routes);
    std::vector<uint32_t> addrs;
    for (const Route& r : routes) {
      uint32_t last = r.prefix.addr | (r.prefix.len == 32 ? 0 : ~uint32_t(0) >> r.prefix.len);
      for (uint32_t a : {r.prefix.addr, last, r.prefix.addr - 1, last + 1}) addrs.push_back(a);
    }
    for (uint32_t low = 0; low < 256; ++low) addrs.push_back(0x0A010200u | low);  // 10.1.2.x
    std::mt19937 rng(1 + order);
    for (int i = 0; i < 100'000; ++i) addrs.push_back(rng());
    EXPECT_EQ(disagreements(ours, *peer, addrs), 0u) << "order " << order;
    // rte_lpm_lookupx4 (four at a time, the last few one by one) says what lookup_bulk says.
    for (size_t n : {addrs.size(), addrs.size() - 1, size_t(3)}) {
      std::vector<uint32_t> x4(n), bulk(n);
      std::unique_ptr<bool[]> found(new bool[n]);
      peer->lookupx4(addrs.data(), x4.data(), n);
      peer->lookup_bulk(addrs.data(), bulk.data(), found.get(), n);
      size_t bad = 0;
      for (size_t i = 0; i < n; ++i)
        bad += x4[i] != (found[i] ? bulk[i] : RteLpmPeer::kX4Miss);
      EXPECT_EQ(bad, 0u) << "lookupx4 over " << n << " addresses, order " << order;
    }
    // Spot checks against hand-computed answers, so agreement is not agreement on a bug.
    std::vector<uint32_t> spot = {*parse_ipv4("10.1.2.200"), *parse_ipv4("10.1.2.201"),
                                  *parse_ipv4("8.8.8.8"), *parse_ipv4("200.1.1.1"),
                                  *parse_ipv4("203.0.113.5")};
    std::vector<uint32_t> hops(spot.size());
    bool found[5];
    peer->lookup_bulk(spot.data(), hops.data(), found, spot.size());
    EXPECT_EQ(hops, (std::vector<uint32_t>{5, 4, 9, 7, 10}));
    for (bool f : found) EXPECT_TRUE(f);
  }
}

TEST(RteLpmAgreement, EmptyTableFindsNothing) {
  Dir24_8 ours(std::vector<Route>{});
  MAKE_PEER_OR_RETURN(peer, std::vector<Route>{});
  std::vector<uint32_t> addrs = {0, 0xFFFFFFFFu, 0x0A000001u};
  EXPECT_EQ(disagreements(ours, *peer, addrs), 0u);
}

// The full Internet table (901,899 prefixes, 961 longer than /24 in 451 tbl8 groups); next hop
// = line index, so a lookup that lands on the wrong prefix cannot agree by chance. Slow: building
// the rte_lpm takes about a minute, as rte_lpm_add scans all rules of the new rule's depth.
TEST(RteLpmAgreement, FullTable) {
  std::vector<Ipv4Prefix> prefixes =
      read_prefix_file(GPUNFV_SOURCE_DIR "/data/router/bart_fulltable_ipv4_prefixes.txt.gz");
  ASSERT_EQ(prefixes.size(), 901899u);
  std::vector<Route> routes;
  routes.reserve(prefixes.size());
  for (uint32_t i = 0; i < prefixes.size(); ++i) routes.push_back(Route{prefixes[i], i});
  Dir24_8 ours(routes);
  MAKE_PEER_OR_RETURN(peer, routes);
  EXPECT_EQ(peer->tbl8_groups(), ours.tbl8_groups_used());

  std::vector<uint32_t> addrs;
  addrs.reserve(2'000'000 + 2 * prefixes.size());
  std::mt19937 rng(4242);
  for (int i = 0; i < 1'000'000; ++i) addrs.push_back(rng());  // uniform
  std::uniform_int_distribution<size_t> pick(0, prefixes.size() - 1);
  for (int i = 0; i < 1'000'000; ++i) {  // inside random prefixes
    const Ipv4Prefix& p = prefixes[pick(rng)];
    addrs.push_back(p.addr | (rng() & (p.len == 32 ? 0 : ~uint32_t(0) >> p.len)));
  }
  for (const Ipv4Prefix& p : prefixes) {  // first and last address of every prefix
    addrs.push_back(p.addr);
    addrs.push_back(p.addr | (p.len == 32 ? 0 : ~uint32_t(0) >> p.len));
  }
  EXPECT_EQ(disagreements(ours, *peer, addrs), 0u) << addrs.size() << " addresses";
}


// Incremental updates, checked independently: the same random add/delete sequence applied to
// rte_lpm (rte_lpm_add / rte_lpm_delete) and to our live table (in transactions of varying
// size), compared by lookups after each transaction.
TEST(RteLpmAgreement, IncrementalAddDeleteSequences) {
  for (uint32_t seed = 21; seed <= 23; ++seed) {
    const std::vector<RouteOp> ops = random_route_ops(seed, 3000, false);
    MAKE_PEER_OR_RETURN(peer, std::vector<Route>{});
    peer.reset();
    peer = std::make_unique<RteLpmPeer>(std::vector<Route>{}, 4096, 1024);
    LiveRouteTable ours(std::vector<Route>{}, 1024);
    const std::vector<uint32_t> addrs = route_probe_addresses(seed);
    size_t at = 0, round = 0;
    while (at < ops.size()) {
      const size_t to = std::min(ops.size(), at + 1 + (round++ * 37) % 250);
      std::vector<LiveRouteTable::Change> changes;
      for (size_t i = at; i < to; ++i) {
        changes.push_back({ops[i].prefix, ops[i].next_hop});
        if (ops[i].next_hop)
          peer->add(Route{ops[i].prefix, *ops[i].next_hop});
        else
          peer->remove(ops[i].prefix);
      }
      ours.apply(changes, "test");
      at = to;
      ASSERT_EQ(disagreements(ours.live_table(), *peer, addrs), 0u)
          << "seed " << seed << " after " << at << " operations";
    }
  }
}

}  // namespace
}  // namespace gpunfv

#endif  // GPUNFV_HAVE_DPDK
