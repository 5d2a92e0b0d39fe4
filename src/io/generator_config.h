// Parsers for the generator port's `rate:` and `size:` values, kept apart so tests can reach
// them directly.
#pragma once

#include <cstdint>
#include <string>

#include "core/config_node.h"

namespace gpunfv {

// `rate:` "10Mpps", "500kpps", "1000pps", "40Gbps", "100Mbps", "2.5Gbps", or "0" (unlimited).
// Bit rates count each frame's bytes plus 20 bytes of preamble, start delimiter and
// inter-frame gap, as a line-rate generator does: 10Gbps of 64-byte frames is 14.88 Mpps.
struct GeneratorRate {
  enum class Unit { unlimited, packets_per_sec, bits_per_sec };
  Unit unit = Unit::unlimited;
  double per_sec = 0;  // packets or bits per second
};
inline constexpr uint32_t kWireOverheadBytes = 20;  // preamble 7 + SFD 1 + IFG 12

// `node` is the rate's scalar; a malformed rate is a ConfigError naming its file:line.
GeneratorRate parse_generator_rate(const ConfigNode& node);

// `size:` "64" (fixed), "imix" (7:4:1 of 64/570/1518), or "64-1518" (uniform). Sizes exclude
// the FCS, as in pcap: 64 means a 64-byte buffer.
struct FrameSizes {
  enum class Kind { fixed, imix, range };
  Kind kind = Kind::fixed;
  uint32_t min = 64, max = 64;  // bounds of what is produced
};
inline constexpr uint32_t kMinGeneratedFrame = 42;    // Ethernet + IPv4 + UDP, empty payload
inline constexpr uint32_t kMaxGeneratedFrame = 9216;  // jumbo frames

FrameSizes parse_frame_sizes(const ConfigNode& node);

}  // namespace gpunfv
