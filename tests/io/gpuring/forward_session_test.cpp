// Forwarding between two GPU ring ports (forward_loops.h) on CPU threads over host memory, fed
// and drained by the NIC emulator, for each variant: every packet delivered in order per ring
// and byte-identical (or routed: TTL - 1, checksum valid), a frame corrupted between rx and tx
// caught by the sampled integrity check, every slot audited, and the shapes that cannot be
// forwarded refused.
#include "chain/ring_nf_hook.h"
#include "chain/ring_nf_runners.h"
#include "io/gpuring/forward_session.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "../port_test_util.h"
#include "ring_test_ports.h"
#include "core/internet_checksum.h"
#include "gpu/device.h"
#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif
#include "io/generator_port.h"
#include "nf/router/router.h"

namespace gpunfv::gpuring {
namespace {

using test::yaml_node;

using ring_test::RecordingPort;

std::unique_ptr<GeneratorPort> generator(uint64_t count, const std::string& size = "64-1500") {
  return ring_test::make_generator(count, size, 64, 11);
}

RingParams params(uint32_t rings, uint32_t batch) {
  RingParams p;
  p.rings = rings;
  p.ring_size = 256;
  p.slot_bytes = 2048;
  p.tail_batch = batch;
  return p;
}

using ring_test::ip_id;

// The generator's frames by IP ID (which counts packets in order).
std::map<uint16_t, std::vector<uint8_t>> expected_frames(uint64_t count) {
  return ring_test::frames_by_ip_id(*generator(count));
}

NicEmulatorConfig exact_nic() {
  NicEmulatorConfig nic;
  nic.rate_pps = 400'000;
  nic.flow_control = true;  // exact counts on a busy test machine
  return nic;
}

class GpuRingForward : public ::testing::TestWithParam<std::tuple<ForwardVariant, uint32_t, uint32_t>> {};

TEST_P(GpuRingForward, DeliversEveryPacketUnchangedInRingOrderAndAuditsEverySlot) {
  const auto [variant, rings, batch] = GetParam();
  constexpr uint64_t kPackets = 12000;
  auto gen = generator(kPackets);
  RecordingPort sink;
  ForwardSession s(params(rings, batch), Placement::host, variant, *gen, &sink, exact_nic(),
                   /*route=*/false, /*integrity=*/true);
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}));
  const ForwardReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(r.nic.offered, kPackets);
  EXPECT_EQ(r.passed(), kPackets);
  EXPECT_EQ(r.drops(), 0u);
  ASSERT_EQ(sink.frames.size(), kPackets);
  EXPECT_EQ(r.nic.reordered_in_ring, 0u);
  if (rings == 1) {
    EXPECT_EQ(r.nic.reordered, 0u);
  }
  auto expected = expected_frames(kPackets);
  size_t same = 0;
  for (const auto& f : sink.frames) same += expected.count(ip_id(f)) && expected[ip_id(f)] == f;
  EXPECT_EQ(same, kPackets);
  EXPECT_TRUE(r.audit.ok()) << r.audit.describe();
  EXPECT_EQ(r.audit.armed, uint64_t(rings) * 256);
  EXPECT_EQ(r.audit.free + r.audit.armed, r.audit.total);
  // Tail updates were batched: far fewer than one per packet on each side.
  if (batch > 1) {
    EXPECT_LT(r.tail_writes_tx(), kPackets);
    EXPECT_LT(r.tail_writes_rx(), kPackets);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GpuRingForward,
    ::testing::Values(std::make_tuple(ForwardVariant::wr, 1u, 8u), std::make_tuple(ForwardVariant::rd, 1u, 8u),
                      std::make_tuple(ForwardVariant::bn, 1u, 8u), std::make_tuple(ForwardVariant::wr, 3u, 1u),
                      std::make_tuple(ForwardVariant::rd, 3u, 16u)),
    [](const auto& info) {
      return std::string(forward_variant_name(std::get<0>(info.param))) + "_rings" +
             std::to_string(std::get<1>(info.param)) + "_batch" + std::to_string(std::get<2>(info.param));
    });

TEST(GpuRingForwardEmulator, DeferredRxWaitAndPhaseTimingChangeNoCount) {
  auto gen = generator(5000);
  RecordingPort sink;
  NicEmulatorConfig nic = exact_nic();
  nic.defer_rx_wait = true;
  nic.phase_timing = true;
  nic.burst = 64;
  nic.tx_burst = 16;
  ForwardSession s(params(2, 8), Placement::host, ForwardVariant::rd, *gen, &sink, nic, false, true);
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}));
  const ForwardReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(sink.frames.size(), 5000u);
  EXPECT_EQ(r.nic.phases.rx_frames, 5000u);
  EXPECT_EQ(r.nic.phases.tx_frames, 5000u);
  EXPECT_GT(r.nic.phases.tx_steps, 5000u / 16 - 1);  // at most tx_burst descriptors per step
  EXPECT_GT(r.nic.phases.rx_copy_ns, 0u);
}

// Flips one sampled byte (offset 21) of every seventh frame between rx and tx.
struct CorruptEverySeventh {
  GPUNFV_HD void operator()(uint8_t* frame, uint32_t len) const {
    if ((uint32_t(frame[18]) << 8 | frame[19]) % 7 == 0 && len > 21) frame[21] ^= 0x5A;
  }
};

TEST(GpuRingForwardIntegrity, AFrameChangedBetweenRxAndTxIsDroppedWithItsReason) {
  for (ForwardVariant variant : {ForwardVariant::wr, ForwardVariant::rd}) {
    auto gen = generator(7000);
    RecordingPort sink;
    ForwardSession s(params(2, 8), Placement::host, variant, *gen, &sink, exact_nic(), false, true);
    s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}), CorruptEverySeventh{});
    const ForwardReport r = s.finish(60);
    EXPECT_EQ(r.accounting_errors(), "") << forward_variant_name(variant);
    EXPECT_EQ(r.drops(DropReason::integrity_mismatch), 1000u);  // IP IDs 0, 7, ..., 6993
    EXPECT_EQ(sink.frames.size(), 6000u);
    for (const auto& f : sink.frames) EXPECT_NE(ip_id(f) % 7, 0);
    EXPECT_TRUE(r.audit.ok()) << r.audit.describe();
  }
}

TEST(GpuRingForwardIntegrity, WithoutTheCheckTheCorruptedFramesGoOut) {
  auto gen = generator(700);
  RecordingPort sink;
  ForwardSession s(params(1, 8), Placement::host, ForwardVariant::rd, *gen, &sink, exact_nic(), false, false);
  s.start_host(0, nf_hook(PassThroughView{}, PassThrough{}), CorruptEverySeventh{});
  const ForwardReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  EXPECT_EQ(sink.frames.size(), 700u);
  EXPECT_EQ(r.drops(), 0u);
}

TEST(GpuRingForwardRoute, RoutedFramesLeaveWithTtlMinusOneAndAValidChecksum) {
  Router router("r", {Route{Ipv4Prefix{0, 0}, 0}}, {1}, {"b"});
  router.prepare(Backend::cpu);
  constexpr uint64_t kPackets = 3000;
  auto gen = generator(kPackets);
  RecordingPort sink;
  ForwardSession s(params(2, 8), Placement::host, ForwardVariant::wr, *gen, &sink, exact_nic(), true, true);
  s.start_host(0, nf_hook(router.host_view(), RouterLogic{}));
  const ForwardReport r = s.finish(60);
  EXPECT_EQ(r.accounting_errors(), "");
  ASSERT_EQ(sink.frames.size(), kPackets);
  auto expected = expected_frames(kPackets);
  size_t ok = 0;
  for (const auto& f : sink.frames) {
    const auto& in = expected[ip_id(f)];
    const uint32_t ip = 14;
    const bool ttl = f[ip + 8] == uint8_t(in[ip + 8] - 1);
    const bool sum = ipv4_checksum::ones_sum(IsoSpan<const uint8_t>(f.data(), f.size()), ip,
                                             (f[ip] & 0x0Fu) * 4u) == 0xFFFF;
    ok += ttl && sum && f.size() == in.size();
  }
  EXPECT_EQ(ok, kPackets);
}

TEST(GpuRingForwardConfig, RefusesRingsOfDifferentShapesAndBnOutsideHostMemory) {
  RingParams a = params(2, 8), b = params(2, 8);
  b.ring_size = 512;
  RingSet ra(a, Placement::host), rb(b, Placement::host);
  EXPECT_THROW(ForwardRings(ra, rb, ForwardVariant::rd, false, false), std::invalid_argument);
  EXPECT_THROW(ForwardRings(ra, ra, ForwardVariant::wr, false, false), std::invalid_argument);
  EXPECT_THROW(parse_forward_variant("rw"), std::invalid_argument);
  EXPECT_EQ(parse_forward_variant("bn"), ForwardVariant::bn);
  RingSet rc(a, Placement::host);
  // Without a GPU build the kernel is refused with a clear error, never run on host rings.
  ForwardRings f(ra, rc, ForwardVariant::rd, false, false);
  EXPECT_ANY_THROW(launch_gpu_forward_runner(f, 0, NfHook{}));
}

// The forwarding kernel on a GPU (skipped without one): wr and rd, every frame delivered
// unchanged in ring order, every packet and slot accounted for, with the emulator's DMA on the
// copy engine and on GPU threads (dma: sm).
class GpuRingForwardOnDevice : public ::testing::TestWithParam<std::tuple<ForwardVariant, uint32_t, NicDma>> {};

TEST_P(GpuRingForwardOnDevice, DeliversEveryPacketUnchangedAndAuditsEverySlot) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const auto [variant, rings, dma] = GetParam();
  constexpr uint64_t kPackets = 20000;
  auto gen = generator(kPackets);
  RecordingPort sink;
  NicEmulatorConfig nic;
  nic.flow_control = true;
  ForwardSession s(params(rings, 8), Placement::device, variant, *gen, &sink, nic, false, true, dma);
  start_gpu(s, 0, NfHook{});
  const ForwardReport r = s.finish(20);
  ASSERT_TRUE(r.drained) << r.accounting_errors();
  EXPECT_EQ(r.accounting_errors(), "");
  ASSERT_EQ(sink.frames.size(), kPackets);
  EXPECT_EQ(r.nic.reordered_in_ring, 0u);
  auto expected = expected_frames(kPackets);
  size_t same = 0;
  for (const auto& f : sink.frames) same += expected.count(ip_id(f)) && expected[ip_id(f)] == f;
  EXPECT_EQ(same, kPackets);
  EXPECT_TRUE(r.audit.ok()) << r.audit.describe();
}

INSTANTIATE_TEST_SUITE_P(Variants, GpuRingForwardOnDevice,
                         ::testing::Values(std::make_tuple(ForwardVariant::wr, 1u, NicDma::batch),
                                           std::make_tuple(ForwardVariant::rd, 1u, NicDma::batch),
                                           std::make_tuple(ForwardVariant::wr, 4u, NicDma::batch),
                                           std::make_tuple(ForwardVariant::rd, 4u, NicDma::batch),
                                           std::make_tuple(ForwardVariant::wr, 1u, NicDma::sm),
                                           std::make_tuple(ForwardVariant::rd, 4u, NicDma::sm)),
                         [](const auto& info) {
                           const NicDma dma = std::get<2>(info.param);
                           return std::string(forward_variant_name(std::get<0>(info.param))) + "_rings" +
                                  std::to_string(std::get<1>(info.param)) +
                                  (dma == NicDma::batch ? "" : std::string("_") + nic_dma_name(dma));
                         });

#if GPUNFV_HAVE_CUDA
TEST(GpuRingForwardOnDeviceRoute, RoutedOnTheGpuAsTheRouterDoes) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  Router router("r", {Route{Ipv4Prefix{0, 0}, 0}}, {1}, {"b"});
  router.prepare(Backend::gpu);
  DeviceBuffer<uint16_t> ports;
  ports.upload(std::vector<uint16_t>{1});
  NfHook hook;
  hook.kind = NfHook::Kind::router;
  hook.router = RouterView{router.table().device_ref(), ports.span()};
  constexpr uint64_t kPackets = 5000;
  auto gen = generator(kPackets);
  RecordingPort sink;
  NicEmulatorConfig nic;
  nic.flow_control = true;
  ForwardSession s(params(2, 8), Placement::device, ForwardVariant::rd, *gen, &sink, nic, true, true);
  start_gpu(s, 0, hook);
  const ForwardReport r = s.finish(20);
  ASSERT_TRUE(r.drained) << r.accounting_errors();
  EXPECT_EQ(r.accounting_errors(), "");
  ASSERT_EQ(sink.frames.size(), kPackets);
  auto expected = expected_frames(kPackets);
  size_t ok = 0;
  for (const auto& f : sink.frames) {
    const auto& in = expected[ip_id(f)];
    ok += f[22] == uint8_t(in[22] - 1) &&
          ipv4_checksum::ones_sum(IsoSpan<const uint8_t>(f.data(), f.size()), 14, (f[14] & 0x0Fu) * 4u) == 0xFFFF;
  }
  EXPECT_EQ(ok, kPackets);
}
#endif

}  // namespace
}  // namespace gpunfv::gpuring
