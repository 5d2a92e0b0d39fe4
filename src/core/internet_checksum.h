// The Internet checksum (RFC 1071) and its incremental update (RFC 1624), for every NF that
// writes IP headers; one source for both backends.
#pragma once

#include <cstdint>

#include "core/compat.h"
#include "core/iso_span.h"
#include "core/parse.h"

namespace gpunfv::ipv4_checksum {

// Folds a 32-bit sum of 16-bit words into 16 bits with end-around carry.
GPUNFV_HD GPUNFV_FORCEINLINE uint16_t fold(uint32_t sum) {
  sum = (sum & 0xFFFF) + (sum >> 16);
  sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

// One's complement sum of the `bytes` (even) bytes at `off`; 0xFFFF over a header whose
// checksum field is correct, and the complement of the checksum to store when it is zero.
GPUNFV_HD inline uint16_t ones_sum(IsoSpan<const uint8_t> f, uint32_t off, uint32_t bytes) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i < bytes; i += 2) sum += load_be16(f, off + i);
  return fold(sum);
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') when one 16-bit word changes from m to m'.
// Unlike RFC 1141's form it never yields 0xFFFF, so it matches a full recomputation.
GPUNFV_HD GPUNFV_FORCEINLINE uint16_t update(uint16_t hc, uint16_t old_word, uint16_t new_word) {
  uint32_t sum = uint32_t(uint16_t(~hc)) + uint16_t(~old_word) + new_word;
  return static_cast<uint16_t>(~fold(sum));
}

}  // namespace gpunfv::ipv4_checksum
