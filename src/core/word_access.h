// Word-wide access to byte spans, for per-packet loops that touch every byte (ESP crypto):
// one bounds check for a whole range, then aligned 32-bit loads and stores.
//
// Why: on the GPU each thread works on its own packet, so one byte load of a warp touches 32
// cache lines; the IPsec kernels were bound by those L1 transactions, not by arithmetic. Words
// cut them by four. Packet fields sit at any alignment (the ESP payload starts at byte 50), and
// the GPU has no unaligned loads, so a misaligned run is read as aligned words joined by
// shifts, and written by read-modify-write of the aligned words it covers. An aligned word
// that holds a byte of the range never leaves the allocation (slots are 64-byte aligned), and
// the bytes of it outside the range are written back unchanged by the same thread. The same
// code runs on the host (little-endian, as every target we build for), so the CPU tests check
// what the GPU runs.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/compat.h"
#include "core/iso_span.h"

namespace gpunfv::words {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "word_access.h assumes little-endian memory");

GPUNFV_HD GPUNFV_FORCEINLINE uint32_t bswap32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, 0, 0x0123);
#else
  return __builtin_bswap32(x);
#endif
}

// Aligned word at p (p % 4 == 0). memcpy on the host keeps the compiler's aliasing rules.
GPUNFV_HD GPUNFV_FORCEINLINE uint32_t load_aligned(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}
GPUNFV_HD GPUNFV_FORCEINLINE void store_aligned(uint8_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint32_t*>(p) = v;
#else
  std::memcpy(p, &v, 4);
#endif
}

// w[0..N) as little-endian words into [off, off + 4N) of s, with one bounds check for the run
// (an NF's results record, stored whole): word stores where the run is 4-byte aligned (NF
// results slices are), byte stores otherwise.
template <size_t N>
GPUNFV_HD GPUNFV_FORCEINLINE void store_le_words(IsoSpan<uint8_t> s, size_t off, const uint32_t (&w)[N]) {
  uint8_t* p = s.template framework_run<4 * N>(off);
  if ((reinterpret_cast<uintptr_t>(p) & 3u) == 0) {
    for (size_t k = 0; k < N; ++k) store_aligned(p + 4 * k, w[k]);
  } else {
    for (size_t k = 0; k < 4 * N; ++k) p[k] = uint8_t(w[k / 4] >> (8 * (k % 4)));
  }
}

// w[0..N) from the little-endian words at [off, off + 4N) of s, with one bounds check for the
// run, as store_le_words writes them (word loads where the run is 4-byte aligned).
template <size_t N>
GPUNFV_HD GPUNFV_FORCEINLINE void load_le_words(IsoSpan<const uint8_t> s, size_t off,
                                               uint32_t (&w)[N]) {
  const uint8_t* p = s.template framework_run<4 * N>(off);
  if ((reinterpret_cast<uintptr_t>(p) & 3u) == 0) {
    for (size_t k = 0; k < N; ++k) w[k] = load_aligned(p + 4 * k);
  } else {
    for (size_t k = 0; k < N; ++k)
      w[k] = uint32_t(p[4 * k]) | uint32_t(p[4 * k + 1]) << 8 | uint32_t(p[4 * k + 2]) << 16 |
             uint32_t(p[4 * k + 3]) << 24;
  }
}

// (hi:lo) >> (8 * bytes) for bytes in 1..3: the little-endian word starting `bytes` into lo.
GPUNFV_HD GPUNFV_FORCEINLINE uint32_t join(uint32_t lo, uint32_t hi, uint32_t bytes) {
  return (lo >> (8 * bytes)) | (hi << (32 - 8 * bytes));
}

// The 16 big-endian words of the 64 bytes at [off, off + 64) of s (a SHA-1 message block).
GPUNFV_HD inline void load_be_block64(IsoSpan<const uint8_t> s, uint32_t off, uint32_t w[16]) {
  const uint8_t* p = s.subspan(off, 64).framework_data();
  const uint32_t phase = uint32_t(reinterpret_cast<uintptr_t>(p) & 3);
  const uint8_t* a = p - phase;
  if (phase == 0) {
    for (int i = 0; i < 16; ++i) w[i] = bswap32(load_aligned(a + 4 * i));
    return;
  }
  uint32_t lo = load_aligned(a);
  for (int i = 0; i < 16; ++i) {
    const uint32_t hi = load_aligned(a + 4 * (i + 1));
    w[i] = bswap32(join(lo, hi, phase));
    lo = hi;
  }
}

// XORs the 16 bytes of k (four little-endian words: byte j of the keystream is byte j % 4 of
// k[j / 4]) into [off, off + 16) of s.
GPUNFV_HD inline void xor_block16(IsoSpan<uint8_t> s, uint32_t off, const uint32_t k[4]) {
  uint8_t* p = s.subspan(off, 16).framework_data();
  const uint32_t phase = uint32_t(reinterpret_cast<uintptr_t>(p) & 3);
  uint8_t* a = p - phase;
  if (phase == 0) {
    for (int i = 0; i < 4; ++i) store_aligned(a + 4 * i, load_aligned(a + 4 * i) ^ k[i]);
    return;
  }
  // Aligned word j holds keystream bytes 4j - phase .. 4j - phase + 3 (those in 0..15).
  const uint32_t up = 8 * phase;
  uint32_t prev = 0;
  for (int j = 0; j < 5; ++j) {
    const uint32_t cur = j < 4 ? k[j] : 0;
    const uint32_t mask = (cur << up) | (prev >> (32 - up));
    store_aligned(a + 4 * j, load_aligned(a + 4 * j) ^ mask);
    prev = cur;
  }
}

// Copies n bytes from [from, from + n) to [to, to + n) of s, where the distance between them
// is a multiple of 4 and at least 16, direction as memmove (never reads a byte it has already
// overwritten). Whole aligned words in the middle, bytes at the two ends.
GPUNFV_HD inline void move_aligned_distance(IsoSpan<uint8_t> s, uint32_t from, uint32_t to,
                                            uint32_t n) {
  if (n == 0) return;
  uint8_t* src = s.subspan(from, n).framework_data();
  uint8_t* dst = s.subspan(to, n).framework_data();
  const uint32_t head = (4 - uint32_t(reinterpret_cast<uintptr_t>(src) & 3)) & 3;
  const uint32_t h = head < n ? head : n;
  const uint32_t body = (n - h) / 4 * 4;
  const uint32_t tail_at = h + body;
  if (dst > src) {
    for (uint32_t j = n; j > tail_at; --j) dst[j - 1] = src[j - 1];
    for (uint32_t j = tail_at; j > h; j -= 4) store_aligned(dst + j - 4, load_aligned(src + j - 4));
    for (uint32_t j = h; j > 0; --j) dst[j - 1] = src[j - 1];
  } else {
    for (uint32_t j = 0; j < h; ++j) dst[j] = src[j];
    for (uint32_t j = h; j < tail_at; j += 4) store_aligned(dst + j, load_aligned(src + j));
    for (uint32_t j = tail_at; j < n; ++j) dst[j] = src[j];
  }
}

}  // namespace gpunfv::words
