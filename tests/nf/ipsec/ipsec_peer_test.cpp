// Our outbound ESP bytes equal the library peers' bytes (bench/peers: OpenSSL EVP, and
// intel-ipsec-mb) for the same SA, sequence number and IV, packet for packet; and OpenSSL
// verifies and decrypts what we wrote. Skipped where CMake found neither library.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nf/ipsec/ipsec.h"
#include "tests/nf/ipsec/ipsec_test_util.h"

#if GPUNFV_HAVE_OPENSSL
#include "peers/openssl_esp_peer.h"
#endif
#if GPUNFV_HAVE_IPSEC_MB
#include "peers/ipsec_mb_peer.h"
#endif

namespace gpunfv {
namespace {

using ipsec_test::EspBatch;
using ipsec_test::FrameSpec;
using ipsec_test::to_hex;

#if GPUNFV_HAVE_OPENSSL || GPUNFV_HAVE_IPSEC_MB
constexpr uint32_t kEpoch = 0x5EED0001u;

peers::EspPeerSa peer_sa(const esp::SaConfig& c) {
  peers::EspPeerSa p;
  p.spi = c.spi;
  p.enc_key = c.enc_key;
  p.nonce = c.nonce;
  p.auth_key = c.auth_key;
  p.local = c.local;
  p.remote = c.remote;
  return p;
}

// Frames of every size class (0..1472 payload bytes, so every padding length), random content.
std::vector<std::vector<uint8_t>> sample_frames() {
  std::mt19937 rng(42);
  std::vector<std::vector<uint8_t>> out;
  for (uint16_t payload = 0; payload <= 1472; payload += (payload < 64 ? 1 : 61)) {
    FrameSpec s;
    s.payload = payload;
    s.tos = uint8_t(rng());
    s.df = rng() & 1;
    s.id = uint16_t(rng());
    s.fill = uint8_t(rng());
    s.dst = 0xC0A80200 | (rng() & 0xFF);
    out.push_back(ipsec_test::udp_frame(s));
  }
  return out;
}

// Our NF's outbound frames for `frames` (sequence numbers 1, 2, ...).
std::vector<std::vector<uint8_t>> ours(const esp::SaConfig& c,
                                       const std::vector<std::vector<uint8_t>>& frames) {
  IpsecGateway nf("out", IpsecDirection::outbound, {c}, false, kEpoch);
  EspBatch b(frames);
  ipsec_test::run(nf, b);
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t i = 0; i < b.count(); ++i) {
    EXPECT_EQ(b.verdict(i), DropReason::none);
    out.push_back(b.frame(i));
  }
  return out;
}
#endif

TEST(IpsecPeer, OpenSslProducesTheSameBytes) {
#if GPUNFV_HAVE_OPENSSL
  esp::SaConfig c = ipsec_test::sa_config(0xC0FFEE01u, 5, "192.168.2.0/24");
  auto frames = sample_frames();
  auto mine = ours(c, frames);
  peers::OpenSslEspPeer peer(peer_sa(c));
  for (size_t i = 0; i < frames.size(); ++i) {
    std::vector<uint8_t> f = frames[i];
    f.resize(f.size() + peers::OpenSslEspPeer::kMaxGrowth);
    uint32_t seq = uint32_t(i + 1);
    size_t n = peer.encapsulate(f.data(), frames[i].size(), 14, seq, uint64_t(kEpoch) << 32 | seq);
    f.resize(n);
    ASSERT_EQ(to_hex(f.data(), f.size()), to_hex(mine[i].data(), mine[i].size())) << "packet " << i;
    // And OpenSSL verifies our ICV and decrypts our ciphertext back to the inner packet.
    std::vector<uint8_t> back = mine[i];
    size_t m = peer.decapsulate(back.data(), back.size(), 14);
    ASSERT_EQ(m, frames[i].size()) << i;
    back.resize(m);
    EXPECT_TRUE(std::equal(back.begin() + 14, back.end(), frames[i].begin() + 14)) << i;
  }
#else
  GTEST_SKIP() << "built without OpenSSL";
#endif
}

TEST(IpsecPeer, IpsecMbProducesTheSameBytes) {
#if GPUNFV_HAVE_IPSEC_MB
  esp::SaConfig c = ipsec_test::sa_config(0x00ABCDEFu, 11, "192.168.2.0/24");
  auto frames = sample_frames();
  auto mine = ours(c, frames);
  peers::IpsecMbEspPeer peer(peer_sa(c));
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<peers::IpsecMbEspPeer::Packet> burst;
  for (size_t i = 0; i < frames.size(); ++i) {
    bufs.push_back(frames[i]);
    bufs.back().resize(frames[i].size() + peers::esp_framing::kMaxGrowth);
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    uint32_t seq = uint32_t(i + 1);
    burst.push_back({bufs[i].data(), frames[i].size(), 14, seq, uint64_t(kEpoch) << 32 | seq});
  }
  peer.encapsulate_burst(burst.data(), burst.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_EQ(burst[i].len, mine[i].size()) << i << " (" << peer.arch() << ")";
    EXPECT_EQ(to_hex(bufs[i].data(), burst[i].len), to_hex(mine[i].data(), mine[i].size()))
        << "packet " << i << " (" << peer.arch() << ")";
  }
#else
  GTEST_SKIP() << "built without intel-ipsec-mb";
#endif
}

// One manager for two SAs, their packets interleaved in one call of more jobs than its queue:
// each packet gets its own SA's bytes.
TEST(IpsecPeer, IpsecMbServesSeveralSasInOneCall) {
#if GPUNFV_HAVE_IPSEC_MB
  const esp::SaConfig a = ipsec_test::sa_config(0x00000A01u, 11, "192.168.2.0/24");
  const esp::SaConfig b = ipsec_test::sa_config(0x00000B02u, 23, "192.168.2.0/24");
  std::vector<std::vector<uint8_t>> frames;
  for (int round = 0; round < 8; ++round)
    for (auto& f : sample_frames()) frames.push_back(f);  // 8 x ~60 frames: past the job queue
  const auto mine_a = ours(a, frames), mine_b = ours(b, frames);
  const std::vector<peers::EspPeerSa> sas = {peer_sa(a), peer_sa(b)};
  peers::IpsecMbEspPeer peer(sas);
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<peers::IpsecMbEspPeer::Packet> burst;
  for (size_t i = 0; i < frames.size(); ++i) {
    bufs.push_back(frames[i]);
    bufs.back().resize(frames[i].size() + peers::esp_framing::kMaxGrowth);
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    const uint32_t seq = uint32_t(i + 1);
    burst.push_back({bufs[i].data(), frames[i].size(), 14, seq, uint64_t(kEpoch) << 32 | seq,
                     uint32_t(i % 2)});
  }
  peer.encapsulate_burst(burst.data(), burst.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& want = i % 2 ? mine_b[i] : mine_a[i];
    ASSERT_EQ(burst[i].len, want.size()) << i;
    EXPECT_EQ(to_hex(bufs[i].data(), burst[i].len), to_hex(want.data(), want.size())) << i;
  }
#else
  GTEST_SKIP() << "built without intel-ipsec-mb";
#endif
}

}  // namespace
}  // namespace gpunfv
