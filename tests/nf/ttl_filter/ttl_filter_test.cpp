// The TTL filter (RFC 5082): drops IPv4 below min_ttl by TTL and IPv6 by hop limit, passes other
// frames; built by type name from a configuration; on the GPU equal to the CPU, bit for bit.
#include "nf/ttl_filter/ttl_filter.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <random>

#include "core/error.h"
#include "tests/fixtures/frame_batch.h"
#include "tests/fixtures/frames.h"
#include "tests/fixtures/gpu_equals_cpu.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device.h"
#endif

namespace gpunfv {
namespace {

using fixtures::arp_frame;
using fixtures::FrameBatch;
using fixtures::ipv4_frame;
using fixtures::ipv6_frame;

std::vector<uint8_t> ipv4_with_ttl(uint8_t ttl) {
  fixtures::Ipv4Fields h;
  h.ttl = ttl;
  h.dst = 0x0A000001;
  return ipv4_frame(h);
}

TEST(TtlFilter, DropsBelowTheMinimumAndPassesTheRest) {
  TtlFilter nf("gtsm", 255);
  FrameBatch b({ipv4_with_ttl(255), ipv4_with_ttl(254), ipv4_with_ttl(1), ipv6_frame(255),
                ipv6_frame(64), arp_frame()});
  nf.process(b.view(), 0, b.count(), 0);
  const DropReason below = drop_reason(TtlFilterDrop::ttl_below_minimum);
  EXPECT_EQ(drop_reason_name(below), "ttl_below_minimum");
  const DropReason want[] = {DropReason::none, below, below, DropReason::none, below, DropReason::none};
  for (uint32_t i = 0; i < b.count(); ++i) {
    EXPECT_EQ(b.verdict(i), want[i]) << i;
    EXPECT_EQ(b.next_nf(i), want[i] == DropReason::none ? 1 : 0) << i;
  }
}

TEST(TtlFilter, LeavesPacketsAtOtherNodesAlone) {
  TtlFilter nf("gtsm", 255);
  FrameBatch b({ipv4_with_ttl(1)});
  nf.process(b.view(), 0, b.count(), 1);  // the packet is at node 0
  EXPECT_EQ(b.verdict(0), DropReason::none);
  EXPECT_EQ(b.next_nf(0), 0);
}

std::unique_ptr<NetworkFunction> from_yaml(const std::string& yaml) {
  NfFactory make = NfRegistry::find("ttl_filter");
  EXPECT_NE(make, nullptr);
  return make(ConfigNode(YAML::Load(yaml), "c.yaml"), NfContext{});
}

TEST(TtlFilter, BuiltByTypeNameFromItsKeys) {
  auto nf = from_yaml("{name: g, type: ttl_filter, min_ttl: 64}");
  EXPECT_EQ(nf->type(), "ttl_filter");
  EXPECT_NE(nf->describe().find("below 64"), std::string::npos);
  EXPECT_NE(from_yaml("{name: g, type: ttl_filter}")->describe().find("below 255"), std::string::npos);
  EXPECT_THROW(from_yaml("{name: g, type: ttl_filter, min_ttl: 0}"), ConfigError);
  EXPECT_THROW(from_yaml("{name: g, type: ttl_filter, min_ttl: 256}"), ConfigError);
  EXPECT_THROW(from_yaml("{name: g, type: ttl_filter, min_tll: 64}"), ConfigError);
}

#if GPUNFV_HAVE_CUDA
TEST(TtlFilter, GpuEqualsCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(7);
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 5000; ++i) {
    const uint8_t ttl = uint8_t(rng());
    frames.push_back(i % 7 == 3 ? ipv6_frame(ttl) : i % 11 == 5 ? arp_frame() : ipv4_with_ttl(ttl));
  }
  TtlFilter nf("gtsm", 128);
  nf.prepare(Backend::gpu);
  FrameBatch b(frames);
  EXPECT_EQ(fixtures::expect_gpu_equals_cpu(nf, b.batch(), 0, GpuStream{nullptr, 0, 256}), 5000u);
}
#endif

}  // namespace
}  // namespace gpunfv
