// Our AES-128, AES-CTR, SHA-1 and HMAC-SHA1(-96) against published known answers: FIPS 197
// Appendix C.1, FIPS 180 ("abc"), and the vector files of data/ipsec (RFC 3686 section 6,
// RFC 2202 section 3).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nf/ipsec/aes128.h"
#include "nf/ipsec/hmac_sha1.h"
#include "nf/ipsec/sha1.h"
#include "tests/nf/ipsec/ipsec_test_util.h"

namespace gpunfv {
namespace {

using ipsec_test::hex;
using ipsec_test::read_records;
using ipsec_test::to_hex;

const std::string kData = GPUNFV_SOURCE_DIR "/data/ipsec/";

TEST(Aes128, Fips197AppendixC1) {
  std::vector<uint8_t> key = hex("000102030405060708090a0b0c0d0e0f");
  aes::Key128 k = aes::expand_key(key.data());
  // FIPS 197 Appendix C.1, round[10].k_sch: 13111d7f e3944a17 f307a78b 4d2b30c5.
  EXPECT_EQ(k.rk[40], 0x13111d7fu);
  EXPECT_EQ(k.rk[41], 0xe3944a17u);
  EXPECT_EQ(k.rk[42], 0xf307a78bu);
  EXPECT_EQ(k.rk[43], 0x4d2b30c5u);
  uint32_t s[4] = {0x00112233u, 0x44556677u, 0x8899aabbu, 0xccddeeffu};
  aes::encrypt_block(k, s, aes::table());
  EXPECT_EQ(s[0], 0x69c4e0d8u);
  EXPECT_EQ(s[1], 0x6a7b0430u);
  EXPECT_EQ(s[2], 0xd8cdb780u);
  EXPECT_EQ(s[3], 0x70b4c55au);
}

TEST(Aes128, SboxIsTheFips197Table) {
  // Spot checks of FIPS 197 Figure 7 (the table is computed, not transcribed).
  EXPECT_EQ(aes::sbox(0x00), 0x63);
  EXPECT_EQ(aes::sbox(0x01), 0x7c);
  EXPECT_EQ(aes::sbox(0x53), 0xed);
  EXPECT_EQ(aes::sbox(0xff), 0x16);
  // A permutation.
  std::vector<int> seen(256, 0);
  for (int x = 0; x < 256; ++x) ++seen[aes::sbox(uint8_t(x))];
  for (int x = 0; x < 256; ++x) EXPECT_EQ(seen[x], 1) << x;
}

TEST(AesCtr, Rfc3686Vectors) {
  auto vectors = read_records(kData + "rfc3686_aes_ctr_test_vectors.txt");
  ASSERT_EQ(vectors.size(), 9u);
  int checked = 0;
  for (auto& v : vectors) {
    std::vector<uint8_t> key = hex(v["key"]);
    if (key.size() != 16) continue;  // #4-#9 are AES-192/256
    std::vector<uint8_t> nonce = hex(v["nonce"]), iv = hex(v["iv"]);
    std::vector<uint8_t> block1 = hex(v["counter_block_1"]);
    std::vector<uint8_t> data = hex(v["plaintext"]), expect = hex(v["ciphertext"]);
    ASSERT_EQ(nonce.size(), 4u);
    ASSERT_EQ(iv.size(), 8u);
    // The counter block layout the file states is the one ctr_xor builds: nonce || iv || 1.
    std::vector<uint8_t> layout = nonce;
    layout.insert(layout.end(), iv.begin(), iv.end());
    layout.insert(layout.end(), {0, 0, 0, 1});
    EXPECT_EQ(layout, block1) << "vector " << v["vector"];

    aes::Key128 k = aes::expand_key(key.data());
    uint32_t n =
        uint32_t(nonce[0]) << 24 | uint32_t(nonce[1]) << 16 | uint32_t(nonce[2]) << 8 | nonce[3];
    uint64_t ivv = 0;
    for (uint8_t b : iv) ivv = ivv << 8 | b;
    aes::ctr_xor(k, n, ivv, IsoSpan<uint8_t>(data.data(), data.size()), 0, uint32_t(data.size()));
    EXPECT_EQ(to_hex(data.data(), data.size()), to_hex(expect.data(), expect.size()))
        << "vector " << v["vector"];
    // CTR is its own inverse.
    aes::ctr_xor(k, n, ivv, IsoSpan<uint8_t>(data.data(), data.size()), 0, uint32_t(data.size()));
    EXPECT_EQ(data, hex(v["plaintext"]));
    ++checked;
  }
  EXPECT_EQ(checked, 3);  // #1-#3
}

TEST(AesCtr, OffsetAndLengthAreRespected) {
  std::vector<uint8_t> key(16, 0x11), buf(100, 0xAB);
  aes::Key128 k = aes::expand_key(key.data());
  aes::ctr_xor(k, 1, 2, IsoSpan<uint8_t>(buf.data(), buf.size()), 10, 37);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(buf[i], 0xAB);
  for (int i = 47; i < 100; ++i) EXPECT_EQ(buf[i], 0xAB);
}

// The GPU's outbound lanes compute a packet's keystream blocks on different lanes and XOR
// them in one at a time (nf/ipsec/esp_crypto.cu): block by block, in any order, at any byte
// alignment and length, the result is ctr_xor's (itself checked against RFC 3686 above).
TEST(AesCtr, KeystreamBlocksInAnyOrderEqualCtrXor) {
  std::vector<uint8_t> key(16);
  for (int i = 0; i < 16; ++i) key[i] = uint8_t(0x30 + 7 * i);
  const aes::Key128 k = aes::expand_key(key.data());
  for (uint32_t off = 0; off < 4; ++off)
    for (uint32_t len = 0; len <= 70; ++len) {
      std::vector<uint8_t> whole(off + len + 3), blocks;
      for (size_t i = 0; i < whole.size(); ++i) whole[i] = uint8_t(i * 13 + len);
      blocks = whole;
      aes::ctr_xor(k, 0xA1B2C3D4u, 0x0102030405060708ull,
                   IsoSpan<uint8_t>(whole.data(), whole.size()), off, len);
      const IsoSpan<uint8_t> d = IsoSpan<uint8_t>(blocks.data(), blocks.size()).subspan(off, len);
      for (uint32_t block = aes::ctr_blocks(len); block >= 1; --block) {  // last first
        uint32_t ks[4];
        aes::keystream_block(k, 0xA1B2C3D4u, 0x0102030405060708ull, block, ks);
        aes::xor_keystream(d, block, ks);
      }
      ASSERT_EQ(blocks, whole) << "offset " << off << ", length " << len;
    }
}

TEST(Sha1, Fips180Abc) {
  const uint8_t abc[] = {'a', 'b', 'c'};
  uint32_t h[5];
  sha1::digest(IsoSpan<const uint8_t>(abc, 3), h);
  EXPECT_EQ(h[0], 0xa9993e36u);
  EXPECT_EQ(h[1], 0x4706816au);
  EXPECT_EQ(h[2], 0xba3e2571u);
  EXPECT_EQ(h[3], 0x7850c26cu);
  EXPECT_EQ(h[4], 0x9cd0d89du);
}

TEST(Sha1, TwoBlockPaddingAndLongMessage) {
  // FIPS 180 two-block message (56 bytes: the length spills into a second block).
  std::string m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  uint32_t h[5];
  sha1::digest(IsoSpan<const uint8_t>(reinterpret_cast<const uint8_t*>(m.data()), m.size()), h);
  EXPECT_EQ(h[0], 0x84983e44u);
  EXPECT_EQ(h[4], 0xe54670f1u);
  // One million 'a' (FIPS 180 long message): 34aa973c d4c4daa4 f61eeb2b dbad2731 6534016f.
  std::vector<uint8_t> a(1000000, 'a');
  sha1::digest(IsoSpan<const uint8_t>(a.data(), a.size()), h);
  EXPECT_EQ(h[0], 0x34aa973cu);
  EXPECT_EQ(h[4], 0x6534016fu);
}

TEST(HmacSha1, Rfc2202Cases) {
  auto cases = read_records(kData + "rfc2202_hmac_sha1_test_vectors.txt");
  ASSERT_EQ(cases.size(), 7u);
  for (auto& c : cases) {
    std::vector<uint8_t> key = hex(c["key_hex"]), data = hex(c["data_hex"]);
    ASSERT_EQ(key.size(), std::stoul(c["key_len"])) << c["test_case"];
    ASSERT_EQ(data.size(), std::stoul(c["data_len"])) << c["test_case"];
    hmac_sha1::Key k = hmac_sha1::make_key(IsoSpan<const uint8_t>(key.data(), key.size()));
    uint32_t d[5];
    hmac_sha1::mac(k, IsoSpan<const uint8_t>(data.data(), data.size()), 0, uint32_t(data.size()),
                   d);
    uint8_t bytes[20];
    for (int i = 0; i < 20; ++i) bytes[i] = uint8_t(d[i / 4] >> (24 - 8 * (i % 4)));
    EXPECT_EQ(to_hex(bytes, 20), c["digest"]) << "case " << c["test_case"];

    // The 96-bit ICV as ESP writes it, and the constant-time check accepting it.
    std::vector<uint8_t> msg = data;
    msg.resize(data.size() + 12);
    IsoSpan<uint8_t> span(msg.data(), msg.size());
    hmac_sha1::write_icv(k, span, 0, uint32_t(data.size()), span, uint32_t(data.size()));
    EXPECT_EQ(to_hex(msg.data() + data.size(), 12), c["digest96"]) << "case " << c["test_case"];
    EXPECT_TRUE(hmac_sha1::icv_matches(k, span, 0, uint32_t(data.size()), uint32_t(data.size())));
    msg[data.size() + 11] ^= 1;
    EXPECT_FALSE(hmac_sha1::icv_matches(k, span, 0, uint32_t(data.size()), uint32_t(data.size())));
  }
}

}  // namespace
}  // namespace gpunfv
