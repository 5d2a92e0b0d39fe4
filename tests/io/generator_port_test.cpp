#include "io/generator_port.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/parse.h"
#include "port_test_util.h"

namespace gpunfv {
namespace {

using test::drain;
using test::Received;
using test::yaml_node;

GeneratorPort make_generator(const std::string& keys, const PortContext& ctx = {}) {
  return GeneratorPort(yaml_node("name: gen\ntype: generator\n" + keys), 5, ctx);
}

uint16_t be16(const std::vector<uint8_t>& f, size_t off) {
  return uint16_t(f[off] << 8 | f[off + 1]);
}
uint32_t be32(const std::vector<uint8_t>& f, size_t off) {
  return uint32_t(be16(f, off)) << 16 | be16(f, off + 2);
}

// Plain RFC 1071 sum, written independently of the port's incremental one.
uint32_t ones_sum(const uint8_t* p, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i]) << 8 | p[i + 1];
  if (n % 2) sum += uint32_t(p[n - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

bool ipv4_checksum_ok(const std::vector<uint8_t>& f) { return ones_sum(&f[14], 20) == 0xFFFF; }

bool udp_checksum_ok(const std::vector<uint8_t>& f) {
  uint16_t udp_len = be16(f, 38);
  if (be16(f, 40) == 0) return false;  // the generator always fills it in
  uint32_t pseudo = ones_sum(&f[26], 8) + kProtoUdp + udp_len;
  return ones_sum(&f[34], udp_len, pseudo) == 0xFFFF;
}

using FiveTuple = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint8_t>;
FiveTuple five_tuple(const std::vector<uint8_t>& f) {
  return {be32(f, 26), be32(f, 30), be16(f, 34), be16(f, 36), f[23]};
}

bool inside(uint32_t addr, const Ipv4Prefix& p) {
  uint32_t mask = p.len == 0 ? 0 : ~0u << (32 - p.len);
  return (addr & mask) == p.addr;
}

TEST(GeneratorPort, ProducesExactCount) {
  auto gen = make_generator("count: 1000\n");
  Received got = drain(gen, 2048, 256);
  EXPECT_EQ(got.size(), 1000u);
  EXPECT_EQ(gen.generated(), 1000u);
  EXPECT_TRUE(gen.rx_done());
  Batch b(8, 2048, MemoryKind::host);
  EXPECT_EQ(gen.rx_burst(b, 8), 0u);
  for (uint16_t port : got.port) EXPECT_EQ(port, 5);
  for (uint16_t len : got.len) EXPECT_EQ(len, 64);
  EXPECT_EQ(gen.max_frame_bytes(), 64u);
}

TEST(GeneratorPort, EveryFrameIsValidIpv4Udp) {
  auto gen = make_generator("count: 3000\nsize: 42-1518\nflows: 64\n");
  Received got = drain(gen);
  ASSERT_EQ(got.size(), 3000u);
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& f = got.bytes[i];
    ASSERT_EQ(f.size(), got.len[i]);
    PacketHeaders h;
    ASSERT_EQ(parse_headers(IsoSpan<const uint8_t>(f.data(), f.size()), h), DropReason::none);
    EXPECT_EQ(h.ip_version, 4);
    EXPECT_EQ(h.l4_proto, kProtoUdp);
    EXPECT_EQ(h.l3_off, 14);
    EXPECT_EQ(h.l4_off, 34);
    EXPECT_TRUE(ipv4_checksum_ok(f)) << "frame " << i;
    EXPECT_TRUE(udp_checksum_ok(f)) << "frame " << i << " size " << f.size();
    EXPECT_EQ(be16(f, 16), f.size() - 14);  // IPv4 total length
    EXPECT_EQ(be16(f, 38), f.size() - 34);  // UDP length
    EXPECT_EQ(f[22], 64);                   // TTL
    EXPECT_EQ(be16(f, 20), 0x4000);         // DF, no fragment offset
    EXPECT_EQ(be16(f, 18), uint16_t(i));    // ID counts up
    const std::vector<uint8_t> macs = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
    EXPECT_TRUE(std::equal(macs.begin(), macs.end(), f.begin()));
    EXPECT_EQ(be32(f, 26) >> 24, 10u);                // source in 10.0.0.0/8
    EXPECT_EQ(be32(f, 30) & 0xFFFE0000, 0xC6120000);  // destination in 198.18.0.0/15
  }
}

TEST(GeneratorPort, FixedImixAndRangeSizes) {
  {
    auto gen = make_generator("count: 100\nsize: 128\n");
    for (uint16_t len : drain(gen).len) EXPECT_EQ(len, 128);
  }
  {
    auto gen = make_generator("count: 1200\nsize: imix\n");
    EXPECT_EQ(gen.max_frame_bytes(), 1518u);
    Received got = drain(gen);
    std::map<uint16_t, int> first12, all;
    for (size_t i = 0; i < got.size(); ++i) {
      if (i < 12) ++first12[got.len[i]];
      ++all[got.len[i]];
    }
    EXPECT_EQ(first12, (std::map<uint16_t, int>{{64, 7}, {570, 4}, {1518, 1}}));
    EXPECT_EQ(all, (std::map<uint16_t, int>{{64, 700}, {570, 400}, {1518, 100}}));
  }
  {
    auto gen = make_generator("count: 2000\nsize: 100-200\n");
    EXPECT_EQ(gen.max_frame_bytes(), 200u);
    Received got = drain(gen);
    uint16_t lo = *std::min_element(got.len.begin(), got.len.end());
    uint16_t hi = *std::max_element(got.len.begin(), got.len.end());
    EXPECT_GE(lo, 100);
    EXPECT_LE(hi, 200);
    EXPECT_LT(lo, 110);  // 2000 uniform draws over 101 sizes reach near both ends
    EXPECT_GT(hi, 190);
  }
}

TEST(GeneratorPort, FlowsAreDistinctAndCycle) {
  auto gen = make_generator("count: 600\nflows: 200\n");
  EXPECT_EQ(gen.flow_count(), 200u);
  Received got = drain(gen);
  std::set<FiveTuple> first_round;
  for (size_t i = 0; i < 200; ++i) first_round.insert(five_tuple(got.bytes[i]));
  EXPECT_EQ(first_round.size(), 200u);
  for (size_t i = 200; i < 600; ++i)
    EXPECT_EQ(five_tuple(got.bytes[i]), five_tuple(got.bytes[i % 200]));
}

TEST(GeneratorPort, DestinationsComeFromRouterPrefixes) {
  const std::vector<Ipv4Prefix> routes = {
      {0x0A010000, 16}, {0xC0000200, 24}, {0xCB007107, 32}, {0xAC100000, 12}};
  PortContext ctx;
  ctx.routes_of = [&](const std::string& nf) { return nf == "r1" ? &routes : nullptr; };
  auto gen = make_generator("count: 400\nflows: 400\ndst_from: r1\n", ctx);
  Received got = drain(gen);
  std::vector<int> hits(routes.size());
  for (const auto& f : got.bytes) {
    uint32_t dst = be32(f, 30);
    bool found = false;
    for (size_t r = 0; r < routes.size(); ++r) {
      if (inside(dst, routes[r])) {
        ++hits[r];
        found = true;
      }
    }
    EXPECT_TRUE(found) << format_ipv4(dst);
  }
  for (int h : hits) EXPECT_GT(h, 50);  // uniform over prefixes, not over addresses
  EXPECT_NE(gen.describe().find("dst_from=r1"), std::string::npos);
}

TEST(GeneratorPort, UnknownRouterIsConfigError) {
  PortContext ctx;
  ctx.routes_of = [](const std::string&) -> const std::vector<Ipv4Prefix>* { return nullptr; };
  EXPECT_THROW(make_generator("count: 1\ndst_from: nope\n", ctx), ConfigError);
  EXPECT_THROW(make_generator("count: 1\ndst_from: nope\n"), ConfigError);  // no context
  const std::vector<Ipv4Prefix> none;
  ctx.routes_of = [&](const std::string&) { return &none; };
  EXPECT_THROW(make_generator("count: 1\ndst_from: empty\n", ctx), ConfigError);
}

TEST(GeneratorPort, SameSeedSameFrames) {
  auto a = make_generator("count: 500\nsize: imix\nseed: 7\n");
  auto b = make_generator("count: 500\nsize: imix\nseed: 7\n");
  auto c = make_generator("count: 500\nsize: imix\nseed: 8\n");
  Received ra = drain(a), rb = drain(b), rc = drain(c);
  EXPECT_EQ(ra.bytes, rb.bytes);
  EXPECT_NE(ra.bytes, rc.bytes);
}

TEST(GeneratorPort, AppendsAfterFramesAlreadyInTheBatch) {
  auto gen = make_generator("count: 100\n");
  Batch b(16, 128, MemoryKind::host);
  b.set_count(10);
  EXPECT_EQ(gen.rx_burst(b, 50), 6u);  // only the free slots
  EXPECT_EQ(b.count(), 16u);
  EXPECT_EQ(b.view().len[9], 0);
  EXPECT_EQ(b.view().len[10], 64);
}

TEST(GeneratorPort, OversizeFrameKeepsItsTrueLength) {
  auto wide = make_generator("count: 10\nsize: 1518\n");
  auto narrow = make_generator("count: 10\nsize: 1518\n");
  Received w = drain(wide, 2048), n = drain(narrow, 64);
  ASSERT_EQ(n.size(), 10u);
  for (size_t i = 0; i < n.size(); ++i) {
    EXPECT_EQ(n.len[i], 1518);
    EXPECT_TRUE(std::equal(n.bytes[i].begin(), n.bytes[i].end(), w.bytes[i].begin()));
  }
}

// How frames are stored (streaming or plain) never changes their bytes, for every size from
// the smallest up, with room in the slot for the last 16-byte chunk or without.
TEST(GeneratorPort, StoresModesWriteTheSameFrames) {
  for (const char* size : {"64", "65-300", "imix", "1518"}) {
    for (uint32_t stride : {128u, 1536u, 1600u}) {
      const std::string keys = std::string("count: 300\nsize: ") + size + "\n";
      auto plain = make_generator(keys + "stores: plain\n");
      auto stream = make_generator(keys + "stores: stream\n");
      auto autom = make_generator(keys);
      Received p = drain(plain, stride), s = drain(stream, stride), a = drain(autom, stride);
      EXPECT_EQ(p.len, s.len) << size << " " << stride;
      EXPECT_EQ(p.bytes, s.bytes) << size << " " << stride;
      EXPECT_EQ(p.bytes, a.bytes) << size << " " << stride;
    }
  }
  auto g = make_generator("count: 5\nstores: stream\n");
  EXPECT_EQ(g.describe(), "generator rate=0 size=64 flows=1024 count=5 seed=1 stores=stream");
  EXPECT_THROW(make_generator("count: 5\nstores: fast\n"), ConfigError);
}

TEST(GeneratorPort, DurationEnds) {
  auto gen = make_generator("duration: 0.02\nsize: 64\n");
  drain(gen, 128, 256);
  EXPECT_TRUE(gen.rx_done());
  EXPECT_GT(gen.generated(), 0u);
}

TEST(GeneratorPort, PacedGeneratorDeliversEverything) {
  // Pacing only decides when frames come, never how many: no timing is asserted.
  auto pps = make_generator("count: 50\nrate: 20kpps\n");
  EXPECT_EQ(drain(pps).size(), 50u);
  auto bps = make_generator("count: 50\nrate: 100Mbps\nsize: imix\n");
  EXPECT_EQ(drain(bps).size(), 50u);
}

TEST(GeneratorPort, ConfigErrors) {
  auto message = [](const std::string& keys) -> std::string {
    try {
      make_generator(keys);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("rate: 1Mpps\n").find("count"), std::string::npos);  // no count or duration
  EXPECT_NE(message("count: 5\nflows: 0\n").find("cfg.yaml:4"), std::string::npos);
  EXPECT_NE(message("count: 5\nrate: fast\n").find("cfg.yaml:4"), std::string::npos);
  EXPECT_NE(message("count: 5\nsize: 20\n").find("cfg.yaml:4"), std::string::npos);
  EXPECT_NE(message("count: 5\nduration: -1\n").find("cfg.yaml:4"), std::string::npos);
  EXPECT_NE(message("count: 5\nrtae: 1Mpps\n").find("rtae"), std::string::npos);
}

TEST(GeneratorPort, Describe) {
  auto gen = make_generator("count: 5\nrate: 10Mpps\nsize: imix\nflows: 3\n");
  EXPECT_EQ(gen.describe(), "generator rate=10Mpps size=imix flows=3 count=5 seed=1");
  EXPECT_EQ(gen.type(), "generator");
  EXPECT_TRUE(gen.has_rx());
  EXPECT_FALSE(gen.has_tx());
}

}  // namespace
}  // namespace gpunfv
