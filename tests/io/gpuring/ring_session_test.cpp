// The GPU ring port's loops on CPU threads over host memory, fed and drained by the NIC
// emulator: every packet and every slot accounted for, frames processed in place and sent
// unchanged otherwise, no reordering within a ring, ring-full drops counted, both tx modes.
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/ring_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "../port_test_util.h"
#include "ring_test_ports.h"
#include "core/parse.h"
#include "io/generator_port.h"
#include "nf/router/router_logic.h"

namespace gpunfv::gpuring {
namespace {

using test::yaml_node;

// A sink that keeps every frame it is sent.
using ring_test::RecordingPort;

std::unique_ptr<GeneratorPort> generator(uint64_t count, const std::string& size = "64",
                                         uint32_t flows = 64) {
  return ring_test::make_generator(count, size, flows, 7);
}

RingParams params(uint32_t rings, uint32_t ring_size, uint32_t batch, bool writeback) {
  RingParams p;
  p.rings = rings;
  p.ring_size = ring_size;
  p.slot_bytes = 2048;
  p.tail_batch = batch;
  p.tail_timeout_ns = 2500;
  p.tx_writeback = writeback;
  return p;
}

// IP ID of a generated frame (bytes 18-19), which counts packets in order.
using ring_test::ip_id;

// Test NF: rewrites the destination MAC in place (so a copy would show) and drops frames
// whose IP ID is a multiple of 5, as "no_route".
struct MarkAndDrop {
  GPUNFV_HD DropReason operator()(const PassThroughView&, PacketRef p) const {
    IsoSpan<uint8_t> f = p.frame();
    if ((uint32_t(f[18]) << 8 | f[19]) % 5 == 0) return drop_reason(RouterDrop::no_route);
    f[0] = 0xAA;
    return DropReason::none;
  }
};

class GpuRingSession : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t, bool>> {};

TEST_P(GpuRingSession, EveryPacketAndSlotAccountedFor) {
  const auto [rings, batch, writeback] = GetParam();
  auto gen = generator(20000, "64-1500");
  RecordingPort sink;
  NicEmulatorConfig nic;
  nic.rate_pps = 400'000;
  nic.flow_control = true;  // CPU threads on a busy test machine stall for milliseconds
  RingSession s(params(rings, 256, batch, writeback), Placement::host, *gen, &sink, nic);
  s.start_host(3, nf_hook(PassThroughView{}, MarkAndDrop{}));
  const RingRunReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(r.nic.offered, 20000u);
  EXPECT_EQ(r.nic.drops_ring_full, 0u);
  EXPECT_EQ(r.nf_drops(drop_reason(RouterDrop::no_route)), 4000u);  // IP IDs 0..19999
  EXPECT_EQ(r.nf_passed(), 16000u);
  EXPECT_EQ(sink.frames.size(), 16000u);
  EXPECT_EQ(r.nic.reordered_in_ring, 0u);
  if (rings == 1) {
    EXPECT_EQ(r.nic.reordered, 0u);
  }
  EXPECT_EQ(r.nic.latency_ns.size(), 16000u);
  // The GPU side's own latency: one sample per sent frame, each within the frame's whole
  // latency (the loops' clock is the emulator's, CLOCK_MONOTONIC, on CPU threads).
  const GpuLatencySummary on_gpu = summarize_gpu_latency(r.rings.latency);
  EXPECT_EQ(on_gpu.count, 16000u);
  EXPECT_LE(on_gpu.p50_ns, on_gpu.p99_ns);
  EXPECT_LE(on_gpu.p99_ns, on_gpu.max_ns);
  EXPECT_LE(on_gpu.max_ns, *std::max_element(r.nic.latency_ns.begin(), r.nic.latency_ns.end()));
  uint64_t spread = 0;
  for (uint64_t n : r.nic.delivered_per_ring) spread += n > 0;
  EXPECT_EQ(spread, rings) << "RSS left a ring without traffic";

  // The frames the sink got are the generator's, marked in place, none of the dropped ones.
  auto again = generator(20000, "64-1500");
  std::map<uint16_t, std::vector<uint8_t>> expected;
  Batch b(64, 2048, MemoryKind::host);
  while (!again->rx_done()) {
    b.set_count(0);
    again->rx_burst(b, 64);
    for (uint32_t i = 0; i < b.count(); ++i) {
      const uint8_t* p = b.view().data.framework_data() + size_t(i) * 2048;
      std::vector<uint8_t> f(p, p + b.view().len[i]);
      if (ip_id(f) % 5 == 0) continue;
      f[0] = 0xAA;
      expected[ip_id(f)] = f;
    }
  }
  size_t matched = 0;
  for (const auto& f : sink.frames) matched += expected.count(ip_id(f)) && expected[ip_id(f)] == f;
  EXPECT_EQ(matched, sink.frames.size());
  EXPECT_TRUE(r.audit.ok()) << r.audit.describe();
  EXPECT_EQ(r.audit.armed, uint64_t(rings) * 256);
  EXPECT_EQ(r.audit.queued_for_tx + r.audit.in_tx_ring, 0u);
}

INSTANTIATE_TEST_SUITE_P(RingsBatchWriteback, GpuRingSession,
                         ::testing::Values(std::make_tuple(1u, 1u, true), std::make_tuple(1u, 16u, false),
                                           std::make_tuple(4u, 8u, true), std::make_tuple(4u, 8u, false),
                                           std::make_tuple(3u, 16u, true)));

TEST(GpuRingSessionDrops, NicDropsWhenTheRingIsFullAndCountsIt) {
  // Nobody consumes until the source is exhausted: the NIC fills the ring's 7 free
  // descriptors (ring_size - 1) and drops the rest.
  auto gen = generator(50, "64", 1);
  RingSet rings(params(1, 8, 1, true), Placement::host);
  auto dma = make_host_dma_engine();
  NicEmulator nic(rings, *gen, nullptr, *dma, NicEmulatorConfig{});
  nic.start();
  while (!nic.rx_finished()) std::this_thread::yield();
  {
    HostRingRunner runner(rings, 0, nf_hook(PassThroughView{}, PassThrough{}));
    runner.stop_and_join();
  }
  nic.join();
  EXPECT_EQ(nic.stats().offered, 50u);
  EXPECT_EQ(nic.stats().delivered, 7u);
  EXPECT_EQ(nic.stats().drops_ring_full, 43u);
  EXPECT_EQ(nic.stats().tx_packets, 7u);
  EXPECT_TRUE(rings.audit().ok()) << rings.audit().describe();
}

TEST(GpuRingSessionDrops, FramesLongerThanASlotAreNicOversizeDrops) {
  RingParams p = params(1, 64, 1, true);
  p.slot_bytes = 128;
  auto gen = generator(100, "64-300");
  RecordingPort sink;
  RingSession s(p, Placement::host, *gen, &sink, NicEmulatorConfig{200'000, 32, 1u << 20});
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}));
  const RingRunReport r = s.finish(30);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_GT(r.nic.drops_oversize, 0u);
  EXPECT_EQ(r.nic.drops_oversize + r.nic.tx_packets, 100u);
  for (const auto& f : sink.frames) EXPECT_LE(f.size(), 128u);
}

// The watchdog's abort: a packet posted to tx with no NIC to send it can never drain (tx waits
// for its completion), so stop alone would hang; abort ends both loops as they stand and marks
// them aborted (done = 2), and the audit then shows the packet still on the tx ring.
TEST(GpuRingSessionAbort, AbortEndsLoopsThatCannotDrain) {
  auto gen = generator(1);
  Batch b(1, 2048, MemoryKind::host);
  ASSERT_EQ(gen->rx_burst(b, 1), 1u);
  RingSet rs(params(1, 16, 1, true), Placement::host);
  const RingSetView& v = rs.view();
  const BatchView bv = b.view();
  std::memcpy(v.slot_ptr(0), bv.data.framework_data(), bv.len[0]);
  {
    HostRingRunner runner(rs, 0, nf_hook(PassThroughView{}, PassThrough{}));
    v.rx_desc[0].qword[0] = 0;
    store_release(&v.rx_desc[0].qword[1], rx_upper(kRxStatusDD | kRxStatusEOP, bv.len[0], 0));
    // Wait until tx has posted it (TDT moves), then stop: the drain cannot finish without a NIC.
    for (int i = 0; i < 20000 && load_acquire(rs.host_regs(0).tdt) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    ASSERT_EQ(load_acquire(rs.host_regs(0).tdt), 1u);
    rs.request_stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(load_acquire(&rs.host_done()[0].tx), 0u);  // still waiting for the NIC
    rs.request_abort();
    runner.stop_and_join();  // returns: the loops honoured the abort
  }
  EXPECT_EQ(rs.host_done()[0].tx, 2u);
  EXPECT_EQ(rs.host_flags()->stop, kStopAbort);  // request_stop() does not undo an abort
  const SlotAudit a = rs.audit();
  EXPECT_EQ(a.in_tx_ring, 1u) << a.describe();
  EXPECT_TRUE(a.ok()) << a.describe();
  EXPECT_NE(rs.describe_registers().find("TDT=1"), std::string::npos) << rs.describe_registers();
}

// The last resort: a phase that outlives its limit ends the process with the watchdog's code,
// naming the phase and the state; a disarmed watchdog does nothing.
TEST(GpuRingSessionAbort, WatchdogEndsAHangingPhase) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        HangWatchdog w([] { return std::string("RDT=7"); });
        w.arm("test phase", 0.05);
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(HangWatchdog::kExitCode), "test phase did not complete.*RDT=7");
  HangWatchdog quiet([] { return std::string(); });
  quiet.arm("quick phase", 0.05);
  quiet.disarm();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace
}  // namespace gpunfv::gpuring
