// The GPU ring port on a GPU: persistent kernels over device memory, fed by the NIC emulator
// through the copy engine. Loss, reordering within a ring and slot accounting are checked;
// skipped where no CUDA device is present (the same protocol runs on CPU threads in
// ring_session_test.cpp).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/io/port_test_util.h"
#include "gpu/device.h"
#include "io/discard_port.h"
#include "io/generator_port.h"
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/ring_session.h"
#include "tests/io/gpuring/ring_test_ports.h"

namespace gpunfv::gpuring {
namespace {

class GpuRingOnDevice : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t, bool>> {};

TEST_P(GpuRingOnDevice, EveryPacketAndSlotAccountedFor) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const auto [rings, size, writeback] = GetParam();
  GeneratorPort gen(test::yaml_node("name: gen\ntype: generator\ncount: 50000\nflows: 1024\nsize: " +
                                    std::to_string(size)),
                    0, PortContext{});
  DiscardPort sink("sink", 1);
  RingParams p;
  p.rings = rings;
  p.ring_size = 512;
  p.tail_batch = 8;
  p.tx_writeback = writeback;
  NicEmulatorConfig nic;
  nic.flow_control = true;  // exact counts: the emulator waits rather than drops
  RingSession s(p, Placement::device, gen, &sink, nic);
  start_gpu(s, 0, NfHook{});
  // 50000 frames take well under a second; a drain still running after 20 s is aborted and
  // reported (r.stall), and a hang the abort cannot end is ended by the session's watchdog.
  const RingRunReport r = s.finish(20);
  ASSERT_TRUE(r.drained) << r.accounting_errors();
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(r.nic.offered, 50000u);
  EXPECT_EQ(r.nic.tx_packets, 50000u);
  EXPECT_EQ(r.nic.reordered_in_ring, 0u);
  if (rings == 1) {
    EXPECT_EQ(r.nic.reordered, 0u);
  }
  EXPECT_TRUE(r.audit.ok()) << r.audit.describe();
}

INSTANTIATE_TEST_SUITE_P(RingsSizeWriteback, GpuRingOnDevice,
                         ::testing::Values(std::make_tuple(1u, 64u, true), std::make_tuple(1u, 1500u, false),
                                           std::make_tuple(4u, 300u, true), std::make_tuple(8u, 1000u, false),
                                           std::make_tuple(16u, 64u, true)));

TEST(GpuRingOnDeviceDrops, RingFullDropsCountedWithoutFlowControl) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  GeneratorPort gen(test::yaml_node("name: gen\ntype: generator\ncount: 200000\nsize: 64"), 0, PortContext{});
  DiscardPort sink("sink", 1);
  RingParams p;
  p.rings = 1;
  p.ring_size = 8;  // tiny ring, unpaced NIC: some frames find it full
  p.tail_batch = 4;
  RingSession s(p, Placement::device, gen, &sink, NicEmulatorConfig{});
  start_gpu(s, 0, NfHook{});
  const RingRunReport r = s.finish(20);
  ASSERT_TRUE(r.drained) << r.accounting_errors();
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(r.nic.offered, 200000u);
  EXPECT_EQ(r.nic.delivered + r.nic.drops_ring_full, 200000u);
}

// The emulator's DMA played by GPU threads (dma: sm): every frame comes out of the rings byte
// for byte as it went in, none lost or reordered within its ring, every slot accounted for.
class GpuRingSmDma : public ::testing::TestWithParam<std::tuple<uint32_t, std::string>> {};

TEST_P(GpuRingSmDma, FramesOutEqualFramesIn) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const auto [rings, size] = GetParam();
  constexpr uint64_t kCount = 20000;
  auto expected_source = ring_test::make_generator(kCount, size, 256, 7);
  const auto expected = ring_test::frames_by_ip_id(*expected_source);
  auto gen = ring_test::make_generator(kCount, size, 256, 7);
  ring_test::RecordingPort sink;
  NicEmulatorConfig nic;
  nic.flow_control = true;
  RingSession s(ring_test::small_rings(rings), Placement::device, *gen, &sink, nic, NicDma::sm);
  start_gpu(s, 0, NfHook{});
  const RingRunReport r = s.finish(20);
  ASSERT_TRUE(r.drained) << r.accounting_errors();
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(r.nic.reordered_in_ring, 0u);
  ASSERT_EQ(sink.frames.size(), kCount);
  // IP IDs wrap at 65536 > kCount: each names one frame.
  size_t mismatched = 0;
  for (const auto& f : sink.frames) {
    const auto it = expected.find(ring_test::ip_id(f));
    mismatched += it == expected.end() || it->second != f;
  }
  EXPECT_EQ(mismatched, 0u);
}

INSTANTIATE_TEST_SUITE_P(RingsSizes, GpuRingSmDma,
                         ::testing::Values(std::make_tuple(1u, std::string("64")),
                                           std::make_tuple(4u, std::string("64-1500"))));

}  // namespace
}  // namespace gpunfv::gpuring
