// AES-128 encryption (FIPS 197) for AES-CTR (RFC 3686), one source for the CPU and the GPU.
//
// A "T-table" implementation: one 1 KiB table Te0 combines SubBytes and MixColumns for one
// column byte; the other three column positions are byte rotations of it, so one table serves
// all four and the last round reads the S-box out of it too. 1 KiB stays resident in a CPU's
// L1 and in a GPU SM's L1/shared memory, where four tables (4 KiB) or a bit-sliced form would
// cost more cache or more instructions per block. The table is computed at compile time from
// the field arithmetic, not transcribed.
//
// CTR mode only needs the forward cipher (both directions XOR the same keystream), so there is
// no decryption round here. The table lookups are data-dependent (cache-timing side channel):
// acceptable for a gateway benchmark NF; a hardened build would use AES-NI / bit-slicing.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/compat.h"
#include "core/iso_span.h"
#include "core/word_access.h"

// Full unrolling keeps SHA-1's message schedule and AES's state in registers on the GPU (a
// dynamically indexed local array would live in local memory). nvcc's device pass takes the
// plain pragma, g++ the GCC one; nvcc's host pass gets none (its front end and g++ would each
// warn about the other's).
#if defined(__CUDA_ARCH__)
#define GPUNFV_IPSEC_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define GPUNFV_IPSEC_UNROLL
#else
#define GPUNFV_IPSEC_UNROLL _Pragma("GCC unroll 16")
#endif

namespace gpunfv::aes {

// --- GF(2^8) arithmetic with the AES polynomial x^8 + x^4 + x^3 + x + 1, at compile time ----
constexpr uint8_t xtime(uint8_t x) { return uint8_t((x << 1) ^ ((x & 0x80) ? 0x1B : 0x00)); }

constexpr uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (int i = 0; i < 8; ++i) {
    if (b & 1) r ^= a;
    a = xtime(a);
    b >>= 1;
  }
  return r;
}

// x^254 = x^-1 in GF(2^8) (and 0 maps to 0, as SubBytes requires).
constexpr uint8_t gf_inverse(uint8_t x) {
  uint8_t result = 1, base = x;
  for (int e = 254; e > 0; e >>= 1) {
    if (e & 1) result = gf_mul(result, base);
    base = gf_mul(base, base);
  }
  return x == 0 ? 0 : result;
}

constexpr uint8_t rotl8(uint8_t x, int n) { return uint8_t((x << n) | (x >> (8 - n))); }

// SubBytes: the multiplicative inverse followed by the affine map of FIPS 197 section 5.1.1.
constexpr uint8_t sbox(uint8_t x) {
  uint8_t b = gf_inverse(x);
  return uint8_t(b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^ rotl8(b, 4) ^ 0x63);
}

struct Table {
  // Te0[x] = (2·S[x], S[x], S[x], 3·S[x]) as a big-endian word: one MixColumns column of the
  // byte S[x] in row 0. Byte 1 of every entry is S[x] itself (used by the last round).
  uint32_t te0[256];
};

constexpr Table make_table() {
  Table t{};
  for (int x = 0; x < 256; ++x) {
    uint8_t s = sbox(uint8_t(x));
    uint8_t s2 = xtime(s), s3 = uint8_t(s2 ^ s);
    t.te0[x] = (uint32_t(s2) << 24) | (uint32_t(s) << 16) | (uint32_t(s) << 8) | s3;
  }
  return t;
}

inline constexpr Table kHostTable = make_table();
#if defined(__CUDACC__)
// The device copy, in global memory (served from L1): static so every .cu translation unit
// has its own and no host shadow symbols clash at link time.
static __device__ const Table kDeviceTable = make_table();
#endif

// The table for the side this code is compiled for.
GPUNFV_HD GPUNFV_FORCEINLINE const uint32_t* table() {
#if defined(__CUDA_ARCH__)
  return kDeviceTable.te0;
#else
  return kHostTable.te0;
#endif
}

// Where encrypt_block reads Te0 from. The CPU, and any GPU code that has not staged a copy,
// read the one 1 KiB table (GlobalTable). The IPsec crypto kernels stage 32 interleaved copies
// in shared memory, word x of lane l at x * 32 + l (LaneTable): every lane reads its own bank, so
// a warp's 32 data-dependent lookups are one conflict-free access instead of up to 8 cache lines
// of the global copy per lookup, which bound the ESP kernels.
struct GlobalTable {
  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t operator[](uint32_t x) const { return table()[x]; }
};
struct LaneTable {
  static constexpr uint32_t kLanes = 32;
  static constexpr uint32_t kWords = 256 * kLanes;  // 32 KiB
  const uint32_t* lane_base;  // the staged copies + this thread's lane
  GPUNFV_HD GPUNFV_FORCEINLINE uint32_t operator[](uint32_t x) const {
    return lane_base[x * kLanes];
  }
};

GPUNFV_HD GPUNFV_FORCEINLINE uint32_t ror32(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

// --- key schedule ---------------------------------------------------------------------------

struct Key128 {
  uint32_t rk[44];  // 11 round keys of 4 big-endian words
};
static_assert(std::is_trivially_copyable_v<Key128>);

GPUNFV_HD inline uint32_t sub_word(uint32_t w, const uint32_t* te) {
  return (((te[w >> 24] >> 16) & 0xFF) << 24) | (((te[(w >> 16) & 0xFF] >> 16) & 0xFF) << 16) |
         (((te[(w >> 8) & 0xFF] >> 16) & 0xFF) << 8) | ((te[w & 0xFF] >> 16) & 0xFF);
}

// FIPS 197 section 5.2 for Nk = 4. `key` holds 16 bytes.
GPUNFV_HD inline Key128 expand_key(const uint8_t key[16]) {
  const uint32_t* te = table();
  Key128 k{};
  for (int i = 0; i < 4; ++i)
    k.rk[i] = (uint32_t(key[4 * i]) << 24) | (uint32_t(key[4 * i + 1]) << 16) |
              (uint32_t(key[4 * i + 2]) << 8) | key[4 * i + 3];
  uint8_t rcon = 1;
  for (int i = 4; i < 44; ++i) {
    uint32_t t = k.rk[i - 1];
    if (i % 4 == 0) {
      t = sub_word((t << 8) | (t >> 24), te) ^ (uint32_t(rcon) << 24);
      rcon = xtime(rcon);
    }
    k.rk[i] = k.rk[i - 4] ^ t;
  }
  return k;
}

// --- one block ------------------------------------------------------------------------------

// Encrypts the 16-byte block held as four big-endian words, in place.
template <typename Table>
GPUNFV_HD GPUNFV_FORCEINLINE void encrypt_block(const Key128& k, uint32_t s[4], Table te) {
  uint32_t s0 = s[0] ^ k.rk[0], s1 = s[1] ^ k.rk[1], s2 = s[2] ^ k.rk[2], s3 = s[3] ^ k.rk[3];
  GPUNFV_IPSEC_UNROLL
  for (int r = 1; r < 10; ++r) {
    const uint32_t* rk = k.rk + 4 * r;
    uint32_t t0 = te[s0 >> 24] ^ ror32(te[(s1 >> 16) & 0xFF], 8) ^ ror32(te[(s2 >> 8) & 0xFF], 16) ^
                  ror32(te[s3 & 0xFF], 24) ^ rk[0];
    uint32_t t1 = te[s1 >> 24] ^ ror32(te[(s2 >> 16) & 0xFF], 8) ^ ror32(te[(s3 >> 8) & 0xFF], 16) ^
                  ror32(te[s0 & 0xFF], 24) ^ rk[1];
    uint32_t t2 = te[s2 >> 24] ^ ror32(te[(s3 >> 16) & 0xFF], 8) ^ ror32(te[(s0 >> 8) & 0xFF], 16) ^
                  ror32(te[s1 & 0xFF], 24) ^ rk[2];
    uint32_t t3 = te[s3 >> 24] ^ ror32(te[(s0 >> 16) & 0xFF], 8) ^ ror32(te[(s1 >> 8) & 0xFF], 16) ^
                  ror32(te[s2 & 0xFF], 24) ^ rk[3];
    s0 = t0, s1 = t1, s2 = t2, s3 = t3;
  }
  // Last round: SubBytes + ShiftRows, no MixColumns; S[x] is byte 1 of Te0[x].
  auto sb = [te](uint32_t x) -> uint32_t { return (te[x] >> 16) & 0xFF; };
  const uint32_t* rk = k.rk + 40;
  s[0] = ((sb(s0 >> 24) << 24) | (sb((s1 >> 16) & 0xFF) << 16) | (sb((s2 >> 8) & 0xFF) << 8) |
          sb(s3 & 0xFF)) ^
         rk[0];
  s[1] = ((sb(s1 >> 24) << 24) | (sb((s2 >> 16) & 0xFF) << 16) | (sb((s3 >> 8) & 0xFF) << 8) |
          sb(s0 & 0xFF)) ^
         rk[1];
  s[2] = ((sb(s2 >> 24) << 24) | (sb((s3 >> 16) & 0xFF) << 16) | (sb((s0 >> 8) & 0xFF) << 8) |
          sb(s1 & 0xFF)) ^
         rk[2];
  s[3] = ((sb(s3 >> 24) << 24) | (sb((s0 >> 16) & 0xFF) << 16) | (sb((s1 >> 8) & 0xFF) << 8) |
          sb(s2 & 0xFF)) ^
         rk[3];
}

// --- CTR mode as ESP uses it (RFC 3686 section 4) -------------------------------------------

// Keystream block `block` (from 1) of one packet: counter block nonce (4 bytes) || iv (8 bytes)
// || block (4 bytes, big-endian), encrypted; returned as the keystream's bytes in memory order
// (four little-endian words), as xor_keystream takes them. Blocks are independent of each
// other, so several GPU lanes may compute one packet's (esp_crypto.cu).
template <typename Table = GlobalTable>
GPUNFV_HD GPUNFV_FORCEINLINE void keystream_block(const Key128& k, uint32_t nonce, uint64_t iv,
                                                  uint32_t block, uint32_t out[4], Table te = Table{}) {
  uint32_t ks[4] = {nonce, uint32_t(iv >> 32), uint32_t(iv), block};
  encrypt_block(k, ks, te);
  for (int w = 0; w < 4; ++w) out[w] = words::bswap32(ks[w]);
}

// XORs keystream block `block` (from 1; `ks` as keystream_block gives it) into its bytes of `d`,
// the whole CTR range: bytes [16 (block - 1), 16 block), or to the end of `d` for the last.
GPUNFV_HD GPUNFV_FORCEINLINE void xor_keystream(IsoSpan<uint8_t> d, uint32_t block, const uint32_t ks[4]) {
  const uint32_t pos = 16 * (block - 1);
  if (pos >= d.size()) return;
  if (d.size() - pos >= 16) {
    words::xor_block16(d, pos, ks);  // whole words (word_access.h: why)
  } else {
    for (uint32_t j = 0; pos + j < d.size(); ++j)  // the loop's test is each byte's bounds check
      d[pos + j] ^= uint8_t(ks[j >> 2] >> (8 * (j & 3)));
  }
}

// CTR blocks of a range of `len` bytes.
GPUNFV_HD GPUNFV_FORCEINLINE uint32_t ctr_blocks(uint32_t len) { return (len + 15) / 16; }

// XORs the AES-CTR keystream into bytes [off, off + len) of `data`. Counter block i (from 1):
// nonce (4 bytes) || iv (8 bytes) || i (4 bytes, big-endian). Encryption and decryption are
// the same operation.
template <typename Table = GlobalTable>
GPUNFV_HD inline void ctr_xor(const Key128& k, uint32_t nonce, uint64_t iv, IsoSpan<uint8_t> data,
                              uint32_t off, uint32_t len, Table te = Table{}) {
  IsoSpan<uint8_t> d = data.subspan(off, len);  // one check for the whole range's bounds
  for (uint32_t block = 1; block <= ctr_blocks(len); ++block) {
    uint32_t ks[4];
    keystream_block(k, nonce, iv, block, ks, te);
    xor_keystream(d, block, ks);
  }
}

}  // namespace gpunfv::aes
