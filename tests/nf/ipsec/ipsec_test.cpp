// The IPsec NF on the CPU backend: ESP layout, sequence numbers, SA selection, round trips,
// every inbound drop reason, the replay window, ingress order, configuration.
#include "nf/ipsec/ipsec.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"
#include "nf/ipsec/esp.h"
#include "nf/ipsec/replay_window.h"
#include "tests/nf/ipsec/ipsec_test_util.h"

namespace gpunfv {
namespace {

using ipsec_test::EspBatch;
using ipsec_test::FrameSpec;
using ipsec_test::sa_config;
using ipsec_test::udp_frame;

uint16_t be16(const std::vector<uint8_t>& f, size_t o) { return uint16_t(f[o] << 8 | f[o + 1]); }
uint32_t be32(const std::vector<uint8_t>& f, size_t o) {
  return uint32_t(be16(f, o)) << 16 | be16(f, o + 2);
}
uint16_t checksum20(const std::vector<uint8_t>& f, size_t o) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += be16(f, o + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return uint16_t(sum);
}

IpsecGateway outbound(std::vector<esp::SaConfig> sas, bool bypass = false, uint32_t epoch = 0) {
  return IpsecGateway("out", IpsecDirection::outbound, sas, bypass, epoch);
}
IpsecGateway inbound(std::vector<esp::SaConfig> sas, bool bypass = false) {
  for (auto& s : sas) s.match.reset();
  return IpsecGateway("in", IpsecDirection::inbound, sas, bypass);
}

// Builds an ESP packet around `plaintext` (inner packet and trailer, as given: the tests make
// bad ones) with our crypto, with a correct ICV unless told otherwise.
std::vector<uint8_t> esp_frame(const esp::SaConfig& c, uint32_t seq,
                               const std::vector<uint8_t>& plaintext) {
  esp::Sa sa = esp::make_sa(c);
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
  const size_t total = 20 + 16 + plaintext.size() + 12;
  std::vector<uint8_t> ip = {0x45,
                             0,
                             uint8_t(total >> 8),
                             uint8_t(total),
                             0,
                             1,
                             0,
                             0,
                             64,
                             50,
                             0,
                             0,
                             203,
                             0,
                             113,
                             1,
                             198,
                             51,
                             100,
                             1};
  f.insert(f.end(), ip.begin(), ip.end());
  uint16_t c16 = uint16_t(~checksum20(f, 14));
  f[24] = uint8_t(c16 >> 8), f[25] = uint8_t(c16);
  for (int i = 3; i >= 0; --i) f.push_back(uint8_t(c.spi >> (8 * i)));
  for (int i = 3; i >= 0; --i) f.push_back(uint8_t(seq >> (8 * i)));
  const uint64_t iv = 0x0102030405060708ull + seq;
  for (int i = 7; i >= 0; --i) f.push_back(uint8_t(iv >> (8 * i)));
  const size_t ct = f.size();
  f.insert(f.end(), plaintext.begin(), plaintext.end());
  f.resize(f.size() + 12);
  IsoSpan<uint8_t> s(f.data(), f.size());
  aes::ctr_xor(sa.enc, sa.nonce, iv, s, uint32_t(ct), uint32_t(plaintext.size()));
  hmac_sha1::write_icv(sa.auth, s, 34, uint32_t(16 + plaintext.size()), s,
                       uint32_t(ct + plaintext.size()));
  return f;
}

// The plaintext ESP carries for an inner IP packet (default padding).
std::vector<uint8_t> esp_plaintext(const std::vector<uint8_t>& inner_frame, uint8_t next = 4) {
  std::vector<uint8_t> p(inner_frame.begin() + 14, inner_frame.end());
  uint8_t pad = uint8_t((4 - (p.size() + 2) % 4) % 4);
  for (uint8_t k = 1; k <= pad; ++k) p.push_back(k);
  p.push_back(pad);
  p.push_back(next);
  return p;
}

// --- outbound ---------------------------------------------------------------------------------

TEST(IpsecOutbound, EspLayoutAndCrypto) {
  esp::SaConfig c = sa_config(0x1234, 1, "192.168.2.0/24");
  IpsecGateway nf = outbound({c}, false, 0xA5A5A5A5u);
  FrameSpec spec;
  spec.payload = 33;  // inner 61 bytes: pad 1
  spec.tos = 0xB8;
  std::vector<uint8_t> in = udp_frame(spec);
  EspBatch b({in});
  ipsec_test::run(nf, b);
  ASSERT_EQ(b.verdict(0), DropReason::none);
  std::vector<uint8_t> f = b.frame(0);
  const size_t inner = in.size() - 14, ct_len = inner + 1 + 2;
  ASSERT_EQ(f.size(), 14 + 20 + 16 + ct_len + 12);
  EXPECT_TRUE(std::equal(in.begin(), in.begin() + 14, f.begin()));  // L2 kept
  // Outer header.
  EXPECT_EQ(f[14], 0x45);
  EXPECT_EQ(f[15], 0xB8);                 // TOS copied
  EXPECT_EQ(be16(f, 16), f.size() - 14);  // total length
  EXPECT_EQ(be16(f, 18), 1);              // ID = sequence number
  EXPECT_EQ(be16(f, 20), 0x4000);         // DF copied
  EXPECT_EQ(f[22], 64);
  EXPECT_EQ(f[23], 50);
  EXPECT_EQ(checksum20(f, 14), 0xFFFF);
  EXPECT_EQ(be32(f, 26), c.local);
  EXPECT_EQ(be32(f, 30), c.remote);
  // ESP header and IV (epoch << 32 | seq).
  EXPECT_EQ(be32(f, 34), 0x1234u);
  EXPECT_EQ(be32(f, 38), 1u);
  EXPECT_EQ(be32(f, 42), 0xA5A5A5A5u);
  EXPECT_EQ(be32(f, 46), 1u);
  // ICV over ESP header .. ciphertext, then decrypt and compare the plaintext.
  esp::Sa sa = esp::make_sa(c);
  IsoSpan<uint8_t> s(f.data(), f.size());
  EXPECT_TRUE(hmac_sha1::icv_matches(sa.auth, s, 34, uint32_t(16 + ct_len), uint32_t(50 + ct_len)));
  aes::ctr_xor(sa.enc, sa.nonce, 0xA5A5A5A500000001ull, s, 50, uint32_t(ct_len));
  std::vector<uint8_t> plain(f.begin() + 50, f.begin() + 50 + ct_len);
  EXPECT_EQ(plain, esp_plaintext(in));
  // Parsed headers describe the new packet.
  const PacketHeaders& h = b.view().headers[0];
  EXPECT_EQ(h.l4_proto, 50);
  EXPECT_EQ(h.l4_off, 34);
}

TEST(IpsecOutbound, PaddingToFourBytes) {
  IpsecGateway nf = outbound({sa_config(0x1000, 1, "0.0.0.0/0")});
  for (uint16_t payload = 0; payload < 8; ++payload) {
    FrameSpec spec;
    spec.payload = payload;
    std::vector<uint8_t> in = udp_frame(spec);
    EspBatch b({in});
    ipsec_test::run(nf, b);
    std::vector<uint8_t> f = b.frame(0);
    size_t inner = in.size() - 14;
    size_t ct_len = f.size() - 14 - 20 - 16 - 12;
    EXPECT_EQ(ct_len % 4, 0u);
    EXPECT_EQ(ct_len, inner + (4 - (inner + 2) % 4) % 4 + 2) << payload;
    EXPECT_LE(f.size() - in.size(), esp::kMaxGrowth);
  }
  EXPECT_EQ(nf.headroom_bytes(), 53u);
}

TEST(IpsecOutbound, SequenceNumbersPerSaInPacketOrder) {
  IpsecGateway nf =
      outbound({sa_config(0x1000, 1, "192.168.2.0/24"), sa_config(0x2000, 2, "192.168.3.0/24")});
  std::vector<std::vector<uint8_t>> frames;
  const uint32_t dsts[] = {0xC0A80202, 0xC0A80303, 0xC0A80202, 0xC0A80202, 0xC0A80303};
  for (uint32_t d : dsts) {
    FrameSpec s;
    s.dst = d;
    frames.push_back(udp_frame(s));
  }
  uint32_t next_a = 1, next_b = 1;
  for (int round = 0; round < 3; ++round) {
    EspBatch b(frames, round * frames.size());
    ipsec_test::run(nf, b);
    for (uint32_t i = 0; i < b.count(); ++i) {
      std::vector<uint8_t> f = b.frame(i);
      uint32_t spi = be32(f, 34), seq = be32(f, 38);
      if (dsts[i] == 0xC0A80202) {
        EXPECT_EQ(spi, 0x1000u);
        EXPECT_EQ(seq, next_a++);
      } else {
        EXPECT_EQ(spi, 0x2000u);
        EXPECT_EQ(seq, next_b++);
      }
      EXPECT_EQ(be32(f, 46), seq);  // IV low word
    }
  }
}

// rewind() (what `gpunfv profile` calls between timed runs of one batch) puts the sequence
// numbers back: the same packets get the same bytes again, numbered from 1.
TEST(IpsecOutbound, RewindNumbersTheSamePacketsAgain) {
  IpsecGateway nf = outbound({sa_config(0x1000, 1, "192.168.2.0/24")});
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < 4; ++i) {
    FrameSpec s;
    s.dst = 0xC0A80202;
    frames.push_back(udp_frame(s));
  }
  EspBatch first(frames, 0);
  ipsec_test::run(nf, first);
  nf.rewind(Backend::cpu);
  EspBatch again(frames, 0);
  ipsec_test::run(nf, again);
  ASSERT_EQ(again.count(), first.count());
  for (uint32_t i = 0; i < again.count(); ++i) {
    EXPECT_EQ(be32(again.frame(i), 38), i + 1);
    EXPECT_EQ(again.frame(i), first.frame(i));
  }
}

TEST(IpsecOutbound, LongestPrefixNoSaAndBypass) {
  std::vector<esp::SaConfig> sas = {sa_config(0x1000, 1, "192.168.0.0/16"),
                                    sa_config(0x2000, 2, "192.168.2.0/24")};
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t d : {0xC0A80202u, 0xC0A80303u, 0x0A000001u}) {
    FrameSpec s;
    s.dst = d;
    frames.push_back(udp_frame(s));
  }
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08, arp[13] = 0x06;
  frames.push_back(arp);

  IpsecGateway drop = outbound(sas);
  EspBatch a(frames);
  ipsec_test::run(drop, a);
  EXPECT_EQ(be32(a.frame(0), 34), 0x2000u);  // /24 beats /16
  EXPECT_EQ(be32(a.frame(1), 34), 0x1000u);
  EXPECT_EQ(a.verdict(2), drop_reason(IpsecDrop::ipsec_no_sa));
  EXPECT_EQ(a.verdict(3), DropReason::not_ipv4);

  IpsecGateway pass = outbound(sas, /*bypass=*/true);
  EspBatch b(frames);
  ipsec_test::run(pass, b);
  EXPECT_EQ(b.verdict(2), DropReason::none);
  EXPECT_EQ(b.verdict(3), DropReason::none);
  EXPECT_EQ(b.frame(2), frames[2]);
  EXPECT_EQ(b.frame(3), frames[3]);
  EXPECT_EQ(b.view().next_nf[2], 1);
}

TEST(IpsecOutbound, SequenceNumberExhaustion) {
  IpsecGateway nf = outbound({sa_config(0x1000, 1, "0.0.0.0/0")});
  nf.host_state()[0].next_seq = 0xFFFFFFFFull;
  EspBatch b({udp_frame({}), udp_frame({}), udp_frame({})});
  ipsec_test::run(nf, b);
  EXPECT_EQ(b.verdict(0), DropReason::none);
  EXPECT_EQ(be32(b.frame(0), 38), 0xFFFFFFFFu);
  EXPECT_EQ(b.verdict(1), drop_reason(IpsecDrop::esp_seq_exhausted));
  EXPECT_EQ(b.verdict(2), drop_reason(IpsecDrop::esp_seq_exhausted));
}

TEST(IpsecOutbound, SlotTooSmallIsOversize) {
  IpsecGateway nf = outbound({sa_config(0x1000, 1, "0.0.0.0/0")});
  FrameSpec s;
  s.payload = 64;  // 106-byte frame + 53 > 128-byte slot
  EspBatch b({udp_frame(s)}, 0, 128);
  ipsec_test::run(nf, b);
  EXPECT_EQ(b.verdict(0), DropReason::oversize);
}

// --- round trip ------------------------------------------------------------------------------

TEST(IpsecRoundTrip, OutboundThenInboundRestoresEveryPacket) {
  std::vector<esp::SaConfig> sas = {sa_config(0x1000, 1, "192.168.2.0/24"),
                                    sa_config(0x2000, 9, "10.0.0.0/8")};
  IpsecGateway out = outbound(sas, false, 77);
  IpsecGateway in = inbound(sas);
  std::vector<std::vector<uint8_t>> frames, expect;
  for (uint16_t payload = 0; payload < 1472; payload += 37) {
    FrameSpec s;
    s.payload = payload;
    s.dst = payload % 2 ? 0xC0A80207 : 0x0A010203;
    s.tos = uint8_t(payload);
    s.df = payload % 3 == 0;
    s.fill = uint8_t(payload);
    s.l2_trailer = payload < 20 ? 6 : 0;  // Ethernet padding: not part of the IP packet
    frames.push_back(udp_frame(s));
    s.l2_trailer = 0;
    expect.push_back(udp_frame(s));
  }
  EspBatch b(frames);
  ipsec_test::run(out, b);
  std::vector<std::vector<uint8_t>> esp_frames;
  for (uint32_t i = 0; i < b.count(); ++i) {
    ASSERT_EQ(b.verdict(i), DropReason::none);
    esp_frames.push_back(b.frame(i));
  }
  EspBatch c(esp_frames);
  ipsec_test::run(in, c);
  for (uint32_t i = 0; i < c.count(); ++i) {
    ASSERT_EQ(c.verdict(i), DropReason::none) << i;
    EXPECT_EQ(c.frame(i), expect[i]) << i;
    EXPECT_EQ(c.view().headers[i].l4_proto, 17);
  }
}

// --- inbound ---------------------------------------------------------------------------------

TEST(IpsecInbound, DropReasons) {
  esp::SaConfig c = sa_config(0x1000, 1);
  IpsecGateway in = inbound({c});
  std::vector<uint8_t> inner = udp_frame({});
  std::vector<uint8_t> good = esp_frame(c, 1, esp_plaintext(inner));

  std::vector<uint8_t> tampered = esp_frame(c, 2, esp_plaintext(inner));
  tampered[60] ^= 0x01;
  std::vector<uint8_t> bad_icv = esp_frame(c, 3, esp_plaintext(inner));
  bad_icv.back() ^= 0x80;
  esp::SaConfig other = sa_config(0x9999, 1);
  std::vector<uint8_t> unknown = esp_frame(other, 4, esp_plaintext(inner));
  // Cut one byte (IP length and checksum fixed): misaligned ciphertext.
  std::vector<uint8_t> cut = esp_frame(c, 5, esp_plaintext(inner));
  cut.pop_back();
  auto fix_ip = [&](std::vector<uint8_t>& f) {
    size_t total = f.size() - 14;
    f[16] = uint8_t(total >> 8), f[17] = uint8_t(total);
    f[24] = f[25] = 0;
    uint16_t s = uint16_t(~checksum20(f, 14));
    f[24] = uint8_t(s >> 8), f[25] = uint8_t(s);
  };
  fix_ip(cut);
  std::vector<uint8_t> runt(good.begin(), good.begin() + 14 + 20 + 8 + 8 + 4);
  fix_ip(runt);
  std::vector<uint8_t> fragment = esp_frame(c, 6, esp_plaintext(inner));
  fragment[20] = 0x20;  // MF
  fix_ip(fragment);
  std::vector<uint8_t> bad_pad_plain = esp_plaintext(inner);
  bad_pad_plain.insert(bad_pad_plain.end() - 2, {9, 9, 9, 9});
  bad_pad_plain[bad_pad_plain.size() - 2] += 4;
  std::vector<uint8_t> bad_pad = esp_frame(c, 7, bad_pad_plain);
  std::vector<uint8_t> ipv6_next = esp_frame(c, 8, esp_plaintext(inner, 41));
  std::vector<uint8_t> not_esp = udp_frame({});
  std::vector<uint8_t> seq0 = esp_frame(c, 0, esp_plaintext(inner));

  EspBatch b(
      {good, tampered, bad_icv, unknown, cut, runt, fragment, bad_pad, ipv6_next, not_esp, seq0});
  ipsec_test::run(in, b);
  EXPECT_EQ(b.verdict(0), DropReason::none);
  std::vector<uint8_t> restored = b.frame(0);
  ASSERT_EQ(restored.size(), inner.size());
  EXPECT_TRUE(std::equal(inner.begin() + 14, inner.end(), restored.begin() + 14));
  EXPECT_TRUE(std::equal(good.begin(), good.begin() + 14, restored.begin()));  // L2 kept
  EXPECT_EQ(b.verdict(1), drop_reason(IpsecDrop::esp_bad_icv));
  EXPECT_EQ(b.verdict(2), drop_reason(IpsecDrop::esp_bad_icv));
  EXPECT_EQ(b.verdict(3), drop_reason(IpsecDrop::esp_unknown_spi));
  EXPECT_EQ(b.verdict(4), drop_reason(IpsecDrop::esp_malformed));
  EXPECT_EQ(b.verdict(5), drop_reason(IpsecDrop::esp_malformed));
  EXPECT_EQ(b.verdict(6), drop_reason(IpsecDrop::esp_malformed));
  EXPECT_EQ(b.verdict(7), drop_reason(IpsecDrop::esp_malformed));
  EXPECT_EQ(b.verdict(8), drop_reason(IpsecDrop::esp_malformed));
  EXPECT_EQ(b.verdict(9), drop_reason(IpsecDrop::ipsec_no_sa));
  EXPECT_EQ(b.verdict(10), drop_reason(IpsecDrop::esp_replay));  // 0 is never a valid sequence number
  // Drops stay at the NF's position: egress counts them against it.
  for (uint32_t i = 1; i < b.count(); ++i) EXPECT_EQ(b.view().next_nf[i], 0) << i;
  EXPECT_EQ(b.view().next_nf[0], 1);
}

TEST(IpsecInbound, ReplayInOneBatchAndAcrossBatches) {
  esp::SaConfig c = sa_config(0x1000, 1);
  IpsecGateway in = inbound({c});
  std::vector<uint8_t> inner = udp_frame({});
  auto pkt = [&](uint32_t seq) { return esp_frame(c, seq, esp_plaintext(inner)); };
  std::vector<uint8_t> forged_dup = pkt(2);
  forged_dup[70] ^= 1;
  EspBatch a({pkt(1), pkt(2), pkt(2), pkt(100), pkt(40), pkt(36), forged_dup, pkt(37)});
  ipsec_test::run(in, a);
  EXPECT_EQ(a.verdict(0), DropReason::none);
  EXPECT_EQ(a.verdict(1), DropReason::none);
  EXPECT_EQ(a.verdict(2), drop_reason(IpsecDrop::esp_replay));   // duplicate
  EXPECT_EQ(a.verdict(3), DropReason::none);         // window moves to 100
  EXPECT_EQ(a.verdict(4), DropReason::none);         // 40: inside [37, 100]
  EXPECT_EQ(a.verdict(5), drop_reason(IpsecDrop::esp_replay));   // 36: left of the window
  EXPECT_EQ(a.verdict(6), drop_reason(IpsecDrop::esp_bad_icv));  // forged: ICV first, window untouched
  EXPECT_EQ(a.verdict(7), DropReason::none);         // 37: the window's left edge
  EspBatch b({pkt(100), pkt(99), pkt(40)}, a.count());
  ipsec_test::run(in, b);
  EXPECT_EQ(b.verdict(0), drop_reason(IpsecDrop::esp_replay));
  EXPECT_EQ(b.verdict(1), DropReason::none);
  EXPECT_EQ(b.verdict(2), drop_reason(IpsecDrop::esp_replay));
}

TEST(EspReplayWindow, Rfc4303Semantics) {
  esp::ReplayWindow w;
  EXPECT_FALSE(w.accept(0));
  EXPECT_TRUE(w.accept(1));
  EXPECT_FALSE(w.accept(1));
  EXPECT_TRUE(w.accept(64));
  EXPECT_TRUE(w.accept(2));     // 64 - 2 = 62 < 64: inside
  EXPECT_TRUE(w.accept(200));   // jump: the window restarts at 200
  EXPECT_FALSE(w.accept(136));  // 200 - 136 = 64: just left of it
  EXPECT_TRUE(w.accept(137));
  EXPECT_FALSE(w.accept(137));
  EXPECT_TRUE(w.accept(0xFFFFFFFFu));
  EXPECT_FALSE(w.accept(200));
}

// --- CPU workers: ordered steps follow ingress order -----------------------------------------

TEST(IpsecOutbound, LaterBatchWaitsForEarlierOne) {
  IpsecGateway nf = outbound({sa_config(0x1000, 1, "0.0.0.0/0")});
  std::vector<std::vector<uint8_t>> frames(4, udp_frame({}));
  EspBatch first(frames, 0), second(frames, 4);
  std::thread later([&] { ipsec_test::run(nf, second); });  // reaches the NF first
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ipsec_test::run(nf, first);
  later.join();
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(be32(first.frame(i), 38), i + 1);
    EXPECT_EQ(be32(second.frame(i), 38), i + 5);
  }
}

// --- configuration ---------------------------------------------------------------------------

const char* kEncKey = "00112233445566778899aabbccddeeff01020304";
const char* kAuthKey = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3";

std::string sa_yaml(const std::string& extra = "", const std::string& enc = kEncKey,
                    const std::string& auth = kAuthKey) {
  return "name: esp\ntype: ipsec\ndirection: outbound\nsas:\n  - spi: 0x1000\n    enc_key: " + enc +
         "\n    auth_key: " + auth +
         "\n    local: 198.51.100.1\n    remote: 203.0.113.1\n    match: 192.168.2.0/24\n" + extra;
}

std::unique_ptr<IpsecGateway> load(const std::string& yaml) {
  return IpsecGateway::from_config(ConfigNode(YAML::Load(yaml), "ipsec.yaml"));
}

std::string load_error(const std::string& yaml) {
  try {
    load(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(IpsecConfig, LoadsAndNeverShowsKeys) {
  auto nf = load(sa_yaml());
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->direction(), IpsecDirection::outbound);
  ASSERT_EQ(nf->table().size(), 1u);
  EXPECT_EQ(nf->table().sa(0).spi, 0x1000u);
  EXPECT_EQ(nf->table().sa(0).nonce, 0x01020304u);
  nlohmann::json j;
  nf->report(j);
  std::string text = nf->describe() + nf->command("sas") + j.dump();
  for (std::string key : {std::string(kEncKey), std::string(kAuthKey), std::string("00112233"),
                          std::string("a0a1a2a3")})
    EXPECT_EQ(text.find(key), std::string::npos) << text;
  EXPECT_NE(nf->command("sas").find("0x00001000"), std::string::npos);
}

TEST(IpsecConfig, ErrorsNameTheLineNotTheKey) {
  std::string bad_key = "00112233445566778899aabbccddeeff010203";  // 19 bytes
  std::string e = load_error(sa_yaml("", bad_key));
  EXPECT_NE(e.find("ipsec.yaml:6"), std::string::npos) << e;
  EXPECT_NE(e.find("40 hex digits"), std::string::npos) << e;
  EXPECT_EQ(e.find(bad_key), std::string::npos) << e;
  std::string not_hex = "zz112233445566778899aabbccddeeff01020304";
  e = load_error(sa_yaml("", kEncKey, not_hex));
  EXPECT_EQ(e.find("112233"), std::string::npos) << e;
  EXPECT_NE(e.find("auth_key"), std::string::npos) << e;

  EXPECT_NE(load_error(sa_yaml("bypass: maybe\n")).find("boolean"), std::string::npos);
  std::string no_match =
      "name: e\ntype: ipsec\ndirection: outbound\nsas:\n  - {spi: 4096, enc_key: " +
      std::string(kEncKey) + ", auth_key: " + kAuthKey + ", local: 1.1.1.1, remote: 2.2.2.2}\n";
  EXPECT_NE(load_error(no_match).find("match"), std::string::npos);
  std::string inbound_ok = no_match;
  inbound_ok.replace(inbound_ok.find("outbound"), 8, "inbound");
  EXPECT_EQ(load_error(inbound_ok), "");
  std::string dup = sa_yaml() + "  - {spi: 0x1000, enc_key: " + kEncKey +
                    ", auth_key: " + kAuthKey +
                    ", local: 1.1.1.1, remote: 2.2.2.2, match: 10.0.0.0/8}\n";
  EXPECT_NE(load_error(dup).find("twice"), std::string::npos);
  std::string low_spi = sa_yaml();
  low_spi.replace(low_spi.find("0x1000"), 6, "255");
  EXPECT_NE(load_error(low_spi).find("out of range"), std::string::npos);
  std::string dir = sa_yaml();
  dir.replace(dir.find("outbound"), 8, "sideways");
  EXPECT_NE(load_error(dir).find("direction"), std::string::npos);
  EXPECT_NE(load_error(sa_yaml("colour: red\n")).find("unknown key"), std::string::npos);
}

}  // namespace
}  // namespace gpunfv
