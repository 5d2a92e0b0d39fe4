// Our crypto on the real ESP packets of the Wireshark sample captures (data/ipsec): no public
// capture uses exactly AES-128-CTR + HMAC-SHA1-96, so each algorithm is checked on the packets
// that use it (SA_PARAMETERS.txt):
//  - capture 1 (transport mode): our HMAC-SHA1-96 verifies the 40 IPv4 HMAC-SHA1-96 ICVs;
//  - capture 2 (tunnel mode, AES-128-CBC + HMAC-SHA1-96, SPI 10): our HMAC-SHA1-96 verifies all
//    312 ICVs, and the inbound NF gets past its ICV check on every one of them (it then drops
//    them as esp_malformed: it decrypts CTR, not CBC);
//  - the IKEv2 capture (ESP in UDP 4500, AES-128-CTR + HMAC-SHA-256-128): our AES-CTR decrypts
//    the 8 AES-CTR packets to valid inner IPv4 packets (ICV checked with OpenSSL's HMAC-SHA-256
//    where available: SHA-256 is not an algorithm of ours).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/parse.h"
#include "nf/ipsec/aes128.h"
#include "nf/ipsec/hmac_sha1.h"
#include "nf/ipsec/ipsec.h"
#include "tests/nf/ipsec/ipsec_test_util.h"
#include "nf/ipsec/esp.h"

#if GPUNFV_HAVE_OPENSSL
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

namespace gpunfv {
namespace {

const std::string kCaptures = GPUNFV_SOURCE_DIR "/data/ipsec/wireshark_samplecaptures/";

std::vector<std::vector<uint8_t>> read_capture(const std::string& path) {
  std::vector<std::vector<uint8_t>> out;
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (!p) {
    ADD_FAILURE() << path << ": " << err;
    return out;
  }
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1) out.emplace_back(data, data + h->caplen);
  pcap_close(p);
  return out;
}

struct Esp {
  uint32_t esp = 0, end = 0;  // [esp, end): SPI .. ICV
  uint32_t spi = 0, dst = 0;
};

// An ESP packet directly over IPv4 (udp_encap: over UDP port 4500, non-ESP marker excluded).
bool find_esp(const std::vector<uint8_t>& f, bool udp_encap, Esp& out) {
  IsoSpan<const uint8_t> s(f.data(), f.size());
  PacketHeaders h;
  if (parse_headers(s, h) != DropReason::none || h.ip_version != 4) return false;
  const uint32_t ip = h.l3_off, ihl = (f[ip] & 0x0F) * 4u, end = ip + load_be16(s, ip + 2);
  uint32_t esp = ip + ihl;
  if (udp_encap) {
    if (f[ip + 9] != 17 || (load_be16(s, esp) != 4500 && load_be16(s, esp + 2) != 4500))
      return false;
    esp += 8;
    if (esp + 4 > end || load_be32(s, esp) == 0) return false;  // IKE behind the marker
  } else if (f[ip + 9] != 50) {
    return false;
  }
  out = Esp{esp, end, load_be32(s, esp), load_be32(s, ip + 16)};
  return true;
}

hmac_sha1::Key ascii_key(const std::string& k) {
  return hmac_sha1::make_key(
      IsoSpan<const uint8_t>(reinterpret_cast<const uint8_t*>(k.data()), k.size()));
}

TEST(IpsecCapture, Capture1HmacSha1IcvsVerify) {
  auto frames = read_capture(kCaptures + "ipsec_esp_capture_1/capture.pcap");
  hmac_sha1::Key key = ascii_key("hmacsha1authenticati");
  int verified = 0, seen = 0;
  for (const auto& f : frames) {
    Esp e;
    if (!find_esp(f, false, e)) continue;
    // 190.0.0.2-.5 (SPIs 110-113) use HMAC-SHA1-96; .12-.15 HMAC-MD5-96; .22-.25 none.
    const uint32_t host = e.dst - 0xBE000000u;
    if (host < 2 || host > 5) continue;
    ++seen;
    IsoSpan<const uint8_t> s(f.data(), f.size());
    if (hmac_sha1::icv_matches(key, s, e.esp, e.end - 12 - e.esp, e.end - 12)) ++verified;
  }
  EXPECT_EQ(seen, 40);
  EXPECT_EQ(verified, 40);
}

TEST(IpsecCapture, Capture2HmacSha1IcvsVerifyAndTheNfAcceptsThem) {
  auto frames = read_capture(kCaptures + "ipsec_esp_capture_2/capture.pcap");
  hmac_sha1::Key key = ascii_key("hmacsha1authenticati");
  std::vector<std::vector<uint8_t>> esp_frames;
  int verified = 0;
  for (const auto& f : frames) {
    Esp e;
    if (!find_esp(f, false, e) || e.spi != 10) continue;
    esp_frames.push_back(f);
    IsoSpan<const uint8_t> s(f.data(), f.size());
    if (hmac_sha1::icv_matches(key, s, e.esp, e.end - 12 - e.esp, e.end - 12)) ++verified;
  }
  EXPECT_EQ(esp_frames.size(), 312u);
  EXPECT_EQ(verified, 312);

  // The inbound NF with that SA (its auth key; the AES key is the CBC key, which CTR cannot use
  // meaningfully): every packet passes the ICV check, then fails the decrypted trailer's checks.
  esp::SaConfig c;
  c.spi = 10;
  std::string aes_key = "aescbcencryption", auth = "hmacsha1authenticati";
  std::copy(aes_key.begin(), aes_key.end(), c.enc_key.begin());
  std::copy(auth.begin(), auth.end(), c.auth_key.begin());
  IpsecGateway nf("in", IpsecDirection::inbound, {c});
  ipsec_test::EspBatch b(esp_frames);
  ipsec_test::run(nf, b);
  for (uint32_t i = 0; i < b.count(); ++i) {
    EXPECT_NE(b.verdict(i), drop_reason(IpsecDrop::esp_bad_icv)) << i;
    EXPECT_NE(b.verdict(i), drop_reason(IpsecDrop::esp_unknown_spi)) << i;
  }
}

TEST(IpsecCapture, Ikev2AesCtrPacketsDecryptToIpv4) {
  auto frames = read_capture(kCaptures + "ipsec_ikev2_esp_aes-gcm_aes-ctr_aes-cbc/capture.pcapng");
  struct CtrSa {
    uint32_t spi;
    std::vector<uint8_t> key_nonce, auth;
  };
  const CtrSa sas[] = {
      {0x78bd5377u, ipsec_test::hex("9e93603f8c0e5406e7bf052518fec074c3ff06c9"),
       ipsec_test::hex("1cfd5c2079c7cab5a98cbe091e6d935832a3b410204313c3e15265567489b7c6")},
      {0x958a753bu, ipsec_test::hex("1f5cbad6da5cfc67c07c561b0f8057153620ce2c"),
       ipsec_test::hex("084ca65b68b3aa811a6c83c52c1b4555b6ce40d6b18cfc205d7ea473e8984d2d")}};
  int decrypted = 0;
  for (auto f : frames) {
    Esp e;
    if (!find_esp(f, true, e)) continue;
    const CtrSa* sa = nullptr;
    for (const auto& s : sas)
      if (s.spi == e.spi) sa = &s;
    if (!sa) continue;
    constexpr uint32_t kIcv = 16;  // HMAC-SHA-256-128
    const uint32_t ct = e.esp + 16, ct_len = e.end - kIcv - ct;
#if GPUNFV_HAVE_OPENSSL
    uint8_t mac[32];
    unsigned mac_len = 0;
    HMAC(EVP_sha256(), sa->auth.data(), int(sa->auth.size()), f.data() + e.esp,
         e.end - kIcv - e.esp, mac, &mac_len);
    EXPECT_TRUE(std::equal(mac, mac + kIcv, f.data() + e.end - kIcv)) << std::hex << e.spi;
#endif
    IsoSpan<uint8_t> s(f.data(), f.size());
    aes::Key128 k = aes::expand_key(sa->key_nonce.data());
    const uint32_t nonce = load_be32(IsoSpan<const uint8_t>(sa->key_nonce.data(), 20), 16);
    const uint64_t iv = uint64_t(load_be32(s, e.esp + 8)) << 32 | load_be32(s, e.esp + 12);
    aes::ctr_xor(k, nonce, iv, s, ct, ct_len);
    // Trailer: next header 4 (IPv4), padding 1, 2, 3, ...
    const uint32_t pad = f[ct + ct_len - 2];
    ASSERT_EQ(f[ct + ct_len - 1], 4);
    ASSERT_LE(pad + 2 + 20, ct_len);
    for (uint32_t j = 0; j < pad; ++j) EXPECT_EQ(f[ct + ct_len - 2 - pad + j], j + 1);
    // A valid IPv4 header (version, checksum) whose length fits what was carried.
    ASSERT_EQ(f[ct] >> 4, 4);
    uint32_t sum = 0;
    for (uint32_t j = 0; j < 20; j += 2) sum += load_be16(s, ct + j);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    EXPECT_EQ(sum, 0xFFFFu);
    EXPECT_LE(load_be16(s, ct + 2), ct_len - 2 - pad);
    EXPECT_EQ(f[ct + 9], 1);  // ICMP pings inside the tunnel
    ++decrypted;
  }
  EXPECT_EQ(decrypted, 8);
}

}  // namespace
}  // namespace gpunfv
