// The ring loops and the forwarding loop run by teams of several lanes (CPU threads standing
// for a warp's lanes, thread_team.h): the paths the GPU runs with a warp (several descriptors
// looked at in one go, one packet per lane through classify + NF, the leader passing and
// dropping them in ring order, a frame's integrity sum shared by the lanes) deliver exactly
// what one thread does: the same frames, the same counts, every slot audited.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "tests/io/port_test_util.h"
#include "tests/io/gpuring/ring_test_ports.h"
#include "io/generator_port.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/loops/forward_rings.h"
#include "io/gpuring/nic_emu/nic_emulator.h"
#include "chain/ring_nf_hook.h"
#include "io/gpuring/loops/internal/ring_loops.h"
#include "tests/io/gpuring/thread_team.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {
namespace {

using test::TeamThreads;
using test::ThreadTeam;
using gpunfv::test::yaml_node;

using ring_test::RecordingPort;

std::unique_ptr<GeneratorPort> generator(uint64_t count) {
  return ring_test::make_generator(count, "64-1500", 128, 13);
}

using ring_test::ip_id;

// Which lane the current thread plays, and how many packets lanes other than the leader ran
// through the NF (the lanes did share the work).
thread_local uint32_t t_lane = 0;
std::atomic<uint64_t> g_not_leader{0};

// Marks every frame in place (so a copy would show) and drops those whose IP ID is a multiple
// of 5 (no_route).
struct MarkAndDrop {
  DropReason operator()(const PassThroughView&, PacketRef p) const {
    if (t_lane != 0) g_not_leader.fetch_add(1);
    IsoSpan<uint8_t> f = p.frame();
    if ((uint32_t(f[18]) << 8 | f[19]) % 5 == 0) return drop_reason(RouterDrop::no_route);
    f[0] = 0xAA;
    return DropReason::none;
  }
};

// Flips a sampled byte of every seventh frame between rx and tx (the integrity check's test).
struct CorruptEverySeventh {
  GPUNFV_HD void operator()(uint8_t* frame, uint32_t len) const {
    if ((uint32_t(frame[18]) << 8 | frame[19]) % 7 == 0 && len > 21) frame[21] ^= 0x5A;
  }
};

std::map<uint16_t, std::vector<uint8_t>> generated(uint64_t count) {
  return ring_test::frames_by_ip_id(*generator(count));
}

RingParams params(uint32_t rings, uint32_t ring_size) {
  RingParams p;
  p.rings = rings;
  p.ring_size = ring_size;
  p.slot_bytes = 2048;
  p.tail_batch = 4;
  p.tail_timeout_ns = 2500;
  return p;
}

NicEmulatorConfig exact_nic() {
  NicEmulatorConfig nic;
  nic.flow_control = true;  // exact counts; unpaced, so the lanes find several packets at once
  return nic;
}

class TeamRingLoops : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t, bool>> {};

TEST_P(TeamRingLoops, SeveralLanesDeliverWhatOneThreadDoes) {
  const auto [lanes, ring_size, writeback] = GetParam();
  constexpr uint64_t kPackets = 3000;
  constexpr uint32_t kRings = 2;
  auto gen = generator(kPackets);
  RecordingPort sink;
  g_not_leader = 0;
  RingParams p = params(kRings, ring_size);
  p.tx_writeback = writeback;
  RingSet rings(p, Placement::host);
  auto dma = make_host_dma_engine();
  NicEmulator nic(rings, *gen, &sink, *dma, exact_nic());
  const RingSetView v = rings.view();
  {
    std::vector<std::unique_ptr<TeamThreads>> teams;
    for (uint32_t r = 0; r < kRings; ++r) {
      teams.push_back(std::make_unique<TeamThreads>(lanes, [v, r](const ThreadTeam& t) {
        t_lane = t.lane();
        rx_ring_loop(v, r, 0, nf_hook(PassThroughView{}, MarkAndDrop{}), t);
      }));
      teams.push_back(std::make_unique<TeamThreads>(lanes, [v, r](const ThreadTeam& t) { tx_ring_loop(v, r, t); }));
    }
    nic.start();
    while (!nic.rx_finished()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    rings.request_stop();
    for (auto& t : teams) t->join();
  }
  nic.join();
  const NicStats& s = nic.stats();
  EXPECT_EQ(s.offered, kPackets);
  EXPECT_EQ(s.delivered, kPackets);
  EXPECT_EQ(s.reordered_in_ring, 0u);
  const RingSnapshot snap = rings.snapshot();
  uint64_t received = 0, passed = 0, no_route = 0;
  for (const RxCounters& c : snap.rx) {
    received += c.packets;
    passed += c.passed;
    no_route += c.drops[static_cast<int>(drop_reason(RouterDrop::no_route))];
  }
  EXPECT_EQ(received, kPackets);
  EXPECT_EQ(no_route, kPackets / 5);  // IP IDs 0..2999
  EXPECT_EQ(passed, kPackets - kPackets / 5);
  ASSERT_EQ(sink.frames.size(), passed);
  auto expected = generated(kPackets);
  size_t same = 0;
  for (const auto& f : sink.frames) {
    auto it = expected.find(ip_id(f));
    if (it == expected.end() || ip_id(f) % 5 == 0) continue;
    std::vector<uint8_t> want = it->second;
    want[0] = 0xAA;
    same += want == f;
  }
  EXPECT_EQ(same, sink.frames.size());
  const SlotAudit a = rings.audit();
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_EQ(a.armed, uint64_t(kRings) * ring_size);
  if (lanes > 1) {
    EXPECT_GT(g_not_leader.load(), 0u) << "only the leader ran the NF";
  }
}

// Lanes 1 (the CPU runner's case through the team path), 4, and 8 lanes on a ring of 8 (more
// lanes than descriptors the NIC may own: the look is capped at ring_size - 1).
INSTANTIATE_TEST_SUITE_P(LanesRingWriteback, TeamRingLoops,
                         ::testing::Values(std::make_tuple(1u, 64u, true), std::make_tuple(4u, 64u, true),
                                           std::make_tuple(4u, 64u, false), std::make_tuple(8u, 8u, true)));

TEST(TeamForwardLoop, FourLanesForwardAndCatchCorruptionAsOneThreadDoes) {
  for (ForwardVariant variant : {ForwardVariant::wr, ForwardVariant::rd}) {
    constexpr uint64_t kPackets = 2100;
    auto gen = generator(kPackets);
    RecordingPort sink;
    RingSet a(params(2, 64), Placement::host), b(params(2, 64), Placement::host);
    ForwardRings fwd(a, b, variant, /*route=*/false, /*integrity=*/true);
    auto dma = make_host_dma_engine();
    NicEmulator nic(a, *gen, &sink, *dma, exact_nic(), &b);
    const ForwardView f = fwd.view();
    {
      std::vector<std::unique_ptr<TeamThreads>> teams;
      for (uint32_t r = 0; r < 2; ++r)
        teams.push_back(std::make_unique<TeamThreads>(4, [f, r](const ThreadTeam& t) {
          forward_ring_loop(f, r, 0, nf_hook(PassThroughView{}, PassThrough{}), CorruptEverySeventh{}, t);
        }));
      nic.start();
      while (!nic.rx_finished()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      fwd.request_stop();
      for (auto& t : teams) t->join();
    }
    nic.join();
    uint64_t received = 0, passed = 0, mismatch = 0;
    for (const RxCounters& c : a.snapshot().rx) {
      received += c.packets;
      passed += c.passed;
      mismatch += c.drops[static_cast<int>(DropReason::integrity_mismatch)];
    }
    const char* name = forward_variant_name(variant).data();
    EXPECT_EQ(received, kPackets) << name;
    EXPECT_EQ(mismatch, kPackets / 7) << name;  // IP IDs 0, 7, ..., 2093
    EXPECT_EQ(passed, kPackets - kPackets / 7) << name;
    EXPECT_EQ(sink.frames.size(), passed) << name;
    auto expected = generated(kPackets);
    size_t same = 0;
    for (const auto& fr : sink.frames) same += ip_id(fr) % 7 != 0 && expected.count(ip_id(fr)) && expected[ip_id(fr)] == fr;
    EXPECT_EQ(same, sink.frames.size()) << name;
    EXPECT_EQ(nic.stats().reordered_in_ring, 0u) << name;
    const SlotAudit audit = fwd.audit();
    EXPECT_TRUE(audit.ok()) << name << ": " << audit.describe();
  }
}

}  // namespace
}  // namespace gpunfv::gpuring

namespace gpunfv::gpuring {
namespace {

// The frames' sums taken several at once, a group of lanes each (team_each_frame): every lane
// gets its own frame's sum, whatever the group size the longest frame calls for.
TEST(TeamIntegrityGroups, EachLaneGetsItsFramesSumFromTheGroupThatTookIt) {
  constexpr uint32_t kLanes = 8;
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t i = 0; i < kLanes; ++i) {
    frames.emplace_back(1500);
    for (size_t b = 0; b < frames[i].size(); ++b) frames[i][b] = uint8_t(b * 31 + i * 7);
  }
  // Longest 64 B (a lane per frame), 512 B (two), 1500 B (the whole team); 7 frames of 8.
  for (const std::vector<uint32_t>& lens : {std::vector<uint32_t>{64, 60, 64, 1, 64, 33, 64},
                                           std::vector<uint32_t>{512, 64, 300, 0, 511, 129, 22},
                                           std::vector<uint32_t>{1500, 64, 1000, 1499, 65, 700, 1}}) {
    const auto count = static_cast<uint32_t>(lens.size());
    std::vector<uint32_t> got(kLanes, 0xFFFFFFFF);
    {
      TeamThreads team(kLanes, [&](const ThreadTeam& t) {
        const uint32_t me = t.lane();
        const uint32_t my_len = me < count ? lens[me] : 0;
        uint32_t mine = 0;
        team_each_frame(t, count, my_len, [&](uint32_t i, uint32_t group) {
          const uint32_t len_i = t.from(i < count ? i : 0, my_len);
          return team_sampled_integrity_grouped(t, group, i < count ? frames[i].data() : nullptr, len_i);
        }, &mine);
        if (me < count) got[me] = mine;
      });
    }
    for (uint32_t i = 0; i < count; ++i)
      EXPECT_EQ(got[i], sampled_integrity(frames[i].data(), lens[i])) << "frame " << i << " of " << lens[i] << " B";
  }
  EXPECT_EQ(integrity_group(32, 64), 1u);
  EXPECT_EQ(integrity_group(32, 512), 2u);
  EXPECT_EQ(integrity_group(32, 1518), 8u);
  EXPECT_EQ(integrity_group(32, 9000), 32u);
  EXPECT_EQ(integrity_group(1, 9000), 1u);
}

}  // namespace
}  // namespace gpunfv::gpuring
