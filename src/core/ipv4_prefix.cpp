#include "core/ipv4_prefix.h"

#include <charconv>

namespace gpunfv {

std::optional<uint32_t> parse_ipv4(std::string_view s) {
  uint32_t addr = 0;
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (s.empty() || s.front() != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    size_t used = static_cast<size_t>(ptr - s.data());
    if (ec != std::errc() || v > 255 || used > 3) return std::nullopt;
    s.remove_prefix(used);
    addr = (addr << 8) | v;
  }
  if (!s.empty()) return std::nullopt;
  return addr;
}

std::optional<Ipv4Prefix> parse_ipv4_prefix(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto addr = parse_ipv4(s.substr(0, slash));
  std::string_view len_s = s.substr(slash + 1);
  unsigned len = 0;
  auto [ptr, ec] = std::from_chars(len_s.data(), len_s.data() + len_s.size(), len);
  if (!addr || len_s.empty() || ec != std::errc() || ptr != len_s.data() + len_s.size() || len > 32)
    return std::nullopt;
  uint32_t mask = len == 0 ? 0 : ~uint32_t(0) << (32 - len);
  if ((*addr & ~mask) != 0) return std::nullopt;
  return Ipv4Prefix{*addr, static_cast<uint8_t>(len)};
}

std::string format_ipv4(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

std::string format_prefix(const Ipv4Prefix& p) {
  return format_ipv4(p.addr) + "/" + std::to_string(p.len);
}

}  // namespace gpunfv
