// The batch-mode loops (ring_batch_loops.h) run by teams of several lanes (CPU threads standing
// for a warp's lanes, thread_team.h), as the GPU runs them with a warp: rx takes several packets
// per look but never more than its batch has room for, lanes write their packets' metadata, tx
// lanes read a done batch a team's worth at a time and the leader queues or frees in packet
// order. Checked against what one thread does: the same seq numbers, batches in ring order,
// every packet sent, dropped or refused for its length, every counter identity, and every slot
// audited (with the batches' holdings), also after an abort with a partial batch out.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "tests/io/gpuring/ring_test_ports.h"
#include "tests/io/gpuring/thread_team.h"
#include "chain/classify.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "io/gpuring/loops/internal/ring_batch_loops.h"
#include "tests/io/gpuring/batch_run_util.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {
namespace {

using ring_test::RecordingPort;
using test::TeamThreads;
using test::ThreadTeam;

std::unique_ptr<GeneratorPort> generator(uint64_t count) {
  return ring_test::make_generator(count, "64-1500", 64, 21);
}

uint16_t ip_id(const uint8_t* f) { return uint16_t(f[18] << 8 | f[19]); }

// What each IP ID gets from the test's "chain" (IDs count 0, 1, ... from the generator).
bool nf_drops(uint16_t id) { return id % 5 == 0; }
bool bad_length(uint16_t id) { return !nf_drops(id) && id % 7 == 3; }
bool trimmed(uint16_t id) { return id % 2 == 0; }

// The chain: drops (no_route), makes lengths the tx side must refuse (0 or longer than a slot,
// alternately), and marks the rest in place, trimming 4 bytes off the even IDs.
void chain_step(const BatchView& b, uint32_t i, uint32_t slot_bytes) {
  classify_packet(b, i);
  if (b.verdict[i] != 0) return;
  PacketRef p(b, i);
  IsoSpan<uint8_t> f = p.frame();
  const uint16_t id = ip_id(&f[0]);
  if (nf_drops(id)) {
    b.verdict[i] = static_cast<uint8_t>(drop_reason(RouterDrop::no_route));
  } else if (bad_length(id)) {
    b.len[i] = static_cast<uint16_t>(id % 2 ? 0 : slot_bytes + 1);
  } else {
    f[0] = 0xAA;
    if (trimmed(id)) p.set_length(p.length() - 4);
  }
}

struct ChainPlayer {
  RingBatches& batches;
  uint32_t slot_bytes;
  uint64_t batches_seen = 0, packets = 0, out_of_order = 0, max_count = 0, bytes_claimed = 0, bytes_seen = 0;
  // The longest run of packets in one batch with the same rx_ns: the packets of one look
  // (rx stamps a look's packets with one time), so more than 1 shows several lanes at work.
  uint64_t max_look = 0;
  std::vector<uint64_t> next_seq;  // per ring

  ChainPlayer(RingBatches& b, uint32_t slot_bytes) : batches(b), slot_bytes(slot_bytes), next_seq(b.view().rings) {
    for (uint32_t r = 0; r < b.view().rings; ++r) next_seq[r] = r;
  }
  bool serve_one(bool hand_back = true) {
    RingBatches::Ready r;
    if (!batches.take_ready(r)) return false;
    const BatchView b = batches.batch_view(r);
    uint64_t run = 0;
    for (uint32_t i = 0; i < b.count; ++i) {
      if (b.seq[i] != next_seq[r.ring]) ++out_of_order;
      next_seq[r.ring] = b.seq[i] + batches.view().rings;
      run = i > 0 && b.rx_ns[i] == b.rx_ns[i - 1] ? run + 1 : 1;
      max_look = std::max(max_look, run);
      bytes_seen += b.len[i];
      chain_step(b, i, slot_bytes);
    }
    ++batches_seen;
    packets += b.count;
    bytes_claimed += r.bytes;
    max_count = std::max<uint64_t>(max_count, b.count);
    if (hand_back) batches.hand_done(r);
    return true;
  }
};


// Both loops of every ring, each a team of `lanes` threads.
std::vector<std::unique_ptr<TeamThreads>> start_teams(const RingSet& rings, const RingBatches& batches,
                                                      uint32_t lanes, uint16_t port_id) {
  const RingSetView v = rings.view();
  const RingBatchView bv = batches.view();
  std::vector<std::unique_ptr<TeamThreads>> teams;
  for (uint32_t r = 0; r < v.p.rings; ++r) {
    teams.push_back(std::make_unique<TeamThreads>(
        lanes, [v, bv, r, port_id](const ThreadTeam& t) { rx_batch_loop(v, bv, r, port_id, t); }));
    teams.push_back(std::make_unique<TeamThreads>(lanes, [v, bv, r](const ThreadTeam& t) { tx_batch_loop(v, bv, r, t); }));
  }
  return teams;
}

struct Shape {
  uint32_t lanes, capacity, rings;
  uint64_t rate_pps;  // 0: unpaced (packets pile up, so looks find many); else batches time out
};

class TeamBatchLoops : public ::testing::TestWithParam<Shape> {};

TEST_P(TeamBatchLoops, EveryPacketSlotAndCounterAccountedFor) {
  const Shape s = GetParam();
  // A batch of one is a team round trip per packet: fewer of them.
  const uint64_t n = s.rate_pps ? 600 : s.capacity == 1 ? 400 : 1500;
  auto gen = generator(n);
  RecordingPort sink;
  RingSet rings(ring_test::small_rings(s.rings), Placement::host);
  RingBatches batches(rings, s.capacity, 4, 30'000);
  auto dma = make_host_dma_engine();
  NicEmulatorConfig nc;
  nc.flow_control = true;  // exact counts on a busy machine
  nc.rate_pps = s.rate_pps;
  NicEmulator nic(rings, *gen, &sink, *dma, nc);
  ChainPlayer chain(batches, rings.params().slot_bytes);
  {
    auto teams = start_teams(rings, batches, s.lanes, 5);
    nic.start();
    ring_test::serve_until_drained(rings, nic, chain, 120, true);
    for (auto& t : teams) t->join();
  }
  nic.join();

  // Packets: delivered, batched once each in ring order, never more than a batch holds.
  const NicStats& st = nic.stats();
  EXPECT_EQ(st.delivered, n);
  EXPECT_EQ(chain.packets, n);
  EXPECT_EQ(chain.out_of_order, 0u);
  EXPECT_LE(chain.max_count, s.capacity);
  EXPECT_EQ(chain.bytes_claimed, chain.bytes_seen);
  EXPECT_LE(chain.max_look, std::min(s.lanes, s.capacity));
  if (s.lanes > 1 && s.capacity > 1 && s.rate_pps == 0) {
    EXPECT_GT(chain.max_look, 1u) << "no look took more than one packet";
  }
  // Counters: rx and tx sides of the batches, the rings, and what the NIC sent.
  uint64_t expect_drops = 0, expect_bad = 0;
  for (uint64_t id = 0; id < n; ++id) {
    expect_drops += nf_drops(uint16_t(id));
    expect_bad += bad_length(uint16_t(id));
  }
  const uint64_t expect_sent = n - expect_drops - expect_bad;
  RingBatchCounters sum{};
  for (const RingBatchCounters& c : batches.counters()) {
    sum.published += c.published;
    sum.packets_batched += c.packets_batched;
    sum.closed_by_timeout += c.closed_by_timeout;
    sum.returned += c.returned;
    sum.queued_for_tx += c.queued_for_tx;
    sum.freed_by_nf_drop += c.freed_by_nf_drop;
    sum.bad_length += c.bad_length;
  }
  EXPECT_EQ(sum.published, chain.batches_seen);
  EXPECT_EQ(sum.returned, sum.published);
  EXPECT_EQ(sum.packets_batched, n);
  EXPECT_LE(sum.closed_by_timeout, sum.published);
  if (s.capacity == 1) {
    EXPECT_EQ(sum.closed_by_timeout, 0u);  // full at its first packet
  }
  if (s.rate_pps && s.capacity > 1) {
    EXPECT_GT(sum.closed_by_timeout, 0u);
  }
  EXPECT_EQ(sum.freed_by_nf_drop, expect_drops);
  EXPECT_EQ(sum.bad_length, expect_bad);
  EXPECT_EQ(sum.queued_for_tx, expect_sent);
  const RingSnapshot snap = rings.snapshot();
  uint64_t rx_packets = 0, passed = 0, posted = 0, completed = 0;
  for (uint32_t r = 0; r < s.rings; ++r) {
    rx_packets += snap.rx[r].packets;
    passed += snap.rx[r].passed;
    posted += snap.tx[r].posted;
    completed += snap.tx[r].completed;
    EXPECT_EQ(snap.rx[r].passed, batches.counters()[r].packets_batched) << "ring " << r;
  }
  EXPECT_EQ(rx_packets, n);
  EXPECT_EQ(passed, n);
  EXPECT_EQ(posted, expect_sent);
  EXPECT_EQ(completed, expect_sent);
  EXPECT_EQ(st.tx_packets, expect_sent);
  // Frames sent: marked in place, trimmed where the chain trimmed them, none refused or dropped.
  ASSERT_EQ(sink.frames.size(), expect_sent);
  std::map<uint16_t, std::vector<uint8_t>> want = ring_test::frames_by_ip_id(*generator(n));
  uint64_t same = 0;
  for (const auto& f : sink.frames) {
    const uint16_t id = ring_test::ip_id(f);
    if (nf_drops(id) || bad_length(id) || !want.count(id)) continue;
    std::vector<uint8_t> w = want[id];
    w[0] = 0xAA;
    if (trimmed(id)) w.resize(w.size() - 4);
    same += w == f;
  }
  EXPECT_EQ(same, expect_sent);
  EXPECT_EQ(st.reordered_in_ring, 0u);
  // Slots: every one free or armed again.
  const BatchHoldings h = batches.holdings();
  const SlotAudit a = rings.audit(&h);
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.held_by_batches, 0u);
  EXPECT_EQ(a.queued_for_tx + a.in_tx_ring, 0u);
  EXPECT_EQ(a.armed, uint64_t(s.rings) * rings.params().ring_size);
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& i) {
  return "lanes" + std::to_string(i.param.lanes) + "_cap" + std::to_string(i.param.capacity) + "_rings" +
         std::to_string(i.param.rings) + (i.param.rate_pps ? "_paced" : "");
}

// A warp's 32 lanes against batch capacities below, at and around a look's size (a look capped
// at the room left; a batch filled across looks), two rings (seq interleaving), a team of one
// (the host runner's path), and paced arrivals that close batches by timeout.
INSTANTIATE_TEST_SUITE_P(
    CapacityBoundaries, TeamBatchLoops,
    ::testing::Values(Shape{32, 1, 1, 0}, Shape{32, 7, 1, 0}, Shape{32, 32, 1, 0}, Shape{32, 33, 1, 0},
                      Shape{32, 64, 1, 0}, Shape{8, 33, 2, 0}, Shape{1, 7, 1, 0}, Shape{32, 64, 1, 40'000},
                      Shape{1, 64, 1, 40'000}),
    shape_name);

TEST(TeamBatchLoopsAbort, PartialBatchAndBatchesStillOutAreHeldInTheAudit) {
  // 100 packets, batches of 33 that close only when full: three full ones the chain keeps and
  // one holding the last packet when the abort comes.
  constexpr uint64_t kPackets = 100;
  auto gen = generator(kPackets);
  RingSet rings(ring_test::small_rings(1), Placement::host);
  // A timeout of an hour: a slow machine (a sanitizer build) took over a second to serve the
  // three full batches, and a 1 s timeout then closed the partial one before the abort.
  RingBatches batches(rings, 33, 4, 3'600'000'000'000);
  auto dma = make_host_dma_engine();
  NicEmulatorConfig nc;
  nc.flow_control = true;
  NicEmulator nic(rings, *gen, nullptr, *dma, nc);
  ChainPlayer chain(batches, rings.params().slot_bytes);
  {
    auto teams = start_teams(rings, batches, 32, 0);
    nic.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline &&
           (chain.batches_seen < 3 || batches.counters()[0].packets_batched < kPackets)) {
      if (!chain.serve_one(false)) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    rings.request_abort();
    for (auto& t : teams) t->join();
  }
  nic.join();
  EXPECT_EQ(chain.batches_seen, 3u);
  EXPECT_EQ(chain.max_count, 33u);
  const RingBatchCounters c = batches.counters()[0];
  EXPECT_EQ(c.packets_batched, kPackets);
  EXPECT_EQ(c.published, 3u);
  EXPECT_EQ(c.returned, 0u);
  EXPECT_EQ(rings.host_done()[0].rx, 2u);
  EXPECT_EQ(rings.host_done()[0].tx, 2u);
  const BatchHoldings h = batches.holdings();
  const SlotAudit a = rings.audit(&h);
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.held_by_batches, kPackets);
}

}  // namespace
}  // namespace gpunfv::gpuring
