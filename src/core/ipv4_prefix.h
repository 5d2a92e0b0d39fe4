// IPv4 prefixes as parsed from route files and used by the generator to draw destinations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpunfv {

struct Ipv4Prefix {
  uint32_t addr = 0;  // host byte order, host bits zero
  uint8_t len = 0;    // 0..32
  bool operator==(const Ipv4Prefix&) const = default;
};

// Parses "a.b.c.d" (host byte order result); nullopt if malformed.
std::optional<uint32_t> parse_ipv4(std::string_view s);
// Parses "a.b.c.d/len"; nullopt if malformed or if host bits are set.
std::optional<Ipv4Prefix> parse_ipv4_prefix(std::string_view s);
std::string format_ipv4(uint32_t addr);
std::string format_prefix(const Ipv4Prefix& p);

}  // namespace gpunfv
