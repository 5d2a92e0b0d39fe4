// Incremental DIR-24-8 updates and the live (double-buffered) route table: after any sequence
// of adds and deletes the table equals one rebuilt from scratch from the remaining prefixes, a
// batch keeps the version it pinned, and every packet is counted against one version.
#include "nf/router/live_routes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "route_sequence.h"

namespace gpunfv {
namespace {

Ipv4Prefix prefix(const char* text) { return *parse_ipv4_prefix(text); }
uint32_t ip(const char* text) { return *parse_ipv4(text); }

int64_t hop(const Dir24_8& t, uint32_t addr) {
  LpmResult r = t.ref().lookup(addr);
  return r.found ? int64_t(r.next_hop) : -1;
}

void apply_incrementally(Dir24_8& t, RouteSet& set, const RouteOp& op) {
  if (op.next_hop) {
    set.set(Route{op.prefix, *op.next_hop});
    t.add(Route{op.prefix, *op.next_hop});
  } else {
    ASSERT_TRUE(set.erase(op.prefix));
    t.remove(op.prefix, set.covering(op.prefix));
  }
}

TEST(Dir24_8Incremental, DeleteRestoresTheCoveringRoute) {
  Dir24_8 t(std::vector<Route>{{prefix("10.0.0.0/8"), 1}});
  RouteSet set(std::vector<Route>{{prefix("10.0.0.0/8"), 1}});
  apply_incrementally(t, set, {prefix("10.1.0.0/16"), 2});
  apply_incrementally(t, set, {prefix("10.1.2.128/25"), 3});
  EXPECT_EQ(hop(t, ip("10.1.2.129")), 3);
  EXPECT_EQ(hop(t, ip("10.1.2.1")), 2);
  EXPECT_EQ(t.tbl8_groups_used(), 1u);
  apply_incrementally(t, set, {prefix("10.1.0.0/16"), std::nullopt});
  EXPECT_EQ(hop(t, ip("10.1.2.1")), 1);    // back to the /8
  EXPECT_EQ(hop(t, ip("10.1.2.129")), 3);  // the /25 stays
  apply_incrementally(t, set, {prefix("10.1.2.128/25"), std::nullopt});
  EXPECT_EQ(hop(t, ip("10.1.2.129")), 1);
  EXPECT_EQ(t.tbl8_groups_used(), 0u);     // the group folded back and is free again
  apply_incrementally(t, set, {prefix("10.0.0.0/8"), std::nullopt});
  EXPECT_EQ(hop(t, ip("10.1.2.129")), -1);
}

TEST(Dir24_8Incremental, ChangingANextHopKeepsLongerPrefixes) {
  Dir24_8 t(std::vector<Route>{{prefix("10.0.0.0/8"), 1}, {prefix("10.0.0.0/24"), 2}});
  t.add(Route{prefix("10.0.0.0/8"), 5});
  EXPECT_EQ(hop(t, ip("10.0.0.7")), 2);
  EXPECT_EQ(hop(t, ip("10.0.1.7")), 5);
}

TEST(Dir24_8Incremental, RemoveRejectsARouteThatDoesNotCover) {
  Dir24_8 t(std::vector<Route>{});
  EXPECT_THROW(t.remove(prefix("10.0.0.0/16"), Route{prefix("11.0.0.0/8"), 1}), std::invalid_argument);
  EXPECT_THROW(t.remove(prefix("10.0.0.0/16"), Route{prefix("10.0.0.0/24"), 1}), std::invalid_argument);
}

// The whole table after random add/delete sequences equals a rebuild from the remaining set.
TEST(Dir24_8Incremental, RandomSequencesEqualARebuild) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    Dir24_8 t(std::vector<Route>{});
    RouteSet set;
    const std::vector<RouteOp> ops = random_route_ops(seed, 1500, true);
    for (size_t i = 0; i < ops.size(); ++i) {
      apply_incrementally(t, set, ops[i]);
      if ((i + 1) % 500 == 0) {
        Dir24_8 rebuilt(set.routes());
        ASSERT_TRUE(t.same_lookups(rebuilt)) << "seed " << seed << " after " << i + 1 << " ops";
        EXPECT_EQ(t.tbl8_groups_used(), rebuilt.tbl8_groups_used()) << "seed " << seed;
      }
    }
  }
}

std::vector<LiveRouteTable::Change> as_changes(const std::vector<RouteOp>& ops, size_t from, size_t to) {
  std::vector<LiveRouteTable::Change> out;
  for (size_t i = from; i < to; ++i) out.push_back({ops[i].prefix, ops[i].next_hop});
  return out;
}

// Transactions of many changes, rendered into whichever copy is idle (that copy lags the other
// by one transaction): both copies match a rebuild whenever they are live.
TEST(LiveRouteTable, TransactionsEqualARebuild) {
  LiveRouteTable live(std::vector<Route>{{prefix("10.0.0.0/8"), 6}}, 4096);
  RouteSet set(std::vector<Route>{{prefix("10.0.0.0/8"), 6}});
  const std::vector<RouteOp> ops = random_route_ops(11, 2400, true);
  // The generated ops start from an empty set; the /8 above is only ever changed by them.
  size_t at = 0;
  for (size_t size : {1, 7, 100, 3, 400, 1, 1, 900}) {
    const size_t to = std::min(ops.size(), at + size);
    const uint64_t v = live.apply(as_changes(ops, at, to), "test");
    for (size_t i = at; i < to; ++i) {
      if (ops[i].next_hop) set.set(Route{ops[i].prefix, *ops[i].next_hop});
      else set.erase(ops[i].prefix);
    }
    at = to;
    LiveRouteTable::Pin pin = live.pin();
    EXPECT_EQ(pin.version(), v);
    ASSERT_TRUE(pin.table().same_lookups(Dir24_8(set.routes()))) << "after " << at << " changes";
  }
  EXPECT_EQ(live.route_count(), set.size());
}

TEST(LiveRouteTable, ABadTransactionChangesNothing) {
  LiveRouteTable live(std::vector<Route>{{prefix("10.0.0.0/8"), 1}}, 4096);
  EXPECT_THROW(live.apply({{prefix("10.1.0.0/16"), 2}, {prefix("10.9.0.0/16"), std::nullopt}}, "bad"),
               std::invalid_argument);  // the delete names a prefix that is not there
  EXPECT_THROW(live.apply({{Ipv4Prefix{ip("10.1.0.1"), 16}, 2}}, "bad"), std::invalid_argument);
  EXPECT_EQ(hop(live.live_table(), ip("10.1.0.1")), 1);
  EXPECT_EQ(live.log().latest(), 1u);
  // A delete after an add of the same prefix in one transaction is fine.
  EXPECT_EQ(live.apply({{prefix("10.1.0.0/16"), 2}, {prefix("10.1.0.0/16"), std::nullopt}}, "ok"), 2u);
}

TEST(LiveRouteTable, TooManyLongPrefixBlocksIsRefused) {
  LiveRouteTable live(std::vector<Route>{}, 2);
  EXPECT_THROW(live.apply({{prefix("10.0.0.0/25"), 1}, {prefix("10.0.1.0/25"), 1},
                           {prefix("10.0.2.0/25"), 1}}, "bad"),
               std::invalid_argument);
  live.apply({{prefix("10.0.0.0/25"), 1}, {prefix("10.0.0.128/25"), 1}, {prefix("10.0.1.0/25"), 1}}, "ok");
  EXPECT_EQ(live.live_table().tbl8_groups_used(), 2u);
  // The other copy has not had those written yet: a third block is refused for it too.
  EXPECT_THROW(live.apply({{prefix("10.0.2.0/25"), 1}}, "bad"), std::invalid_argument);
  // Deleting a block's prefixes frees its group in each copy as it is written, so another
  // block fits once both copies have had the delete.
  live.apply({{prefix("10.0.1.0/25"), std::nullopt}}, "free");
  live.apply({}, "settle");
  live.apply({{prefix("10.0.2.0/25"), 1}}, "ok");
  live.apply({}, "settle");  // both copies written
  EXPECT_EQ(hop(live.live_table(), ip("10.0.2.1")), 1);
  EXPECT_EQ(hop(live.live_table(), ip("10.0.1.1")), -1);
}

// A batch that pinned a copy keeps it whole: the update that would write that copy waits until
// the pin is released (checked from the writer's side, so this cannot pass by timing).
TEST(LiveRouteTable, APinnedCopyIsNotWrittenUntilReleased) {
  LiveRouteTable live(std::vector<Route>{{prefix("10.0.0.0/8"), 1}}, 16);
  auto held = std::make_unique<LiveRouteTable::Pin>(live.pin());
  const int held_slot = live.slot_index(*held);
  std::atomic<bool> holding{true}, written_while_held{false};
  live.before_write = [&](int slot) {
    if (slot == held_slot && holding.load()) written_while_held = true;
  };
  live.apply({{prefix("10.0.0.0/8"), 2}}, "first");  // writes the other copy
  EXPECT_EQ(hop(held->table(), ip("10.1.1.1")), 1);
  std::thread writer([&] { live.apply({{prefix("10.0.0.0/8"), 3}}, "second"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // give a missing wait a chance
  EXPECT_EQ(hop(held->table(), ip("10.1.1.1")), 1);
  holding = false;
  held.reset();
  writer.join();
  EXPECT_FALSE(written_while_held.load());
  EXPECT_EQ(hop(live.live_table(), ip("10.1.1.1")), 3);
}

TEST(LiveRouteTable, PacketsCountAgainstThePinnedVersion) {
  LiveRouteTable live(std::vector<Route>{{prefix("10.0.0.0/8"), 1}}, 16);
  { live.pin().count(5); }
  live.apply({{prefix("10.0.0.0/8"), 2}}, "change");
  {
    LiveRouteTable::Pin p = live.pin();
    p.count(7);
  }
  const nlohmann::json j = live.log().json();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["packets"], 5u);
  EXPECT_EQ(j[1]["packets"], 7u);
  EXPECT_EQ(j[1]["change"], "change");
  EXPECT_EQ(live.log().packets(), 12u);
}

}  // namespace
}  // namespace gpunfv
