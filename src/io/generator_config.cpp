#include "io/generator_config.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace gpunfv {

GeneratorRate parse_generator_rate(const ConfigNode& node) {
  const std::string s = node.as_string();
  auto bad = [&]() {
    node.fail("bad rate '" + s +
              "' (expected e.g. 10Mpps, 500kpps, 1000pps, 40Gbps, 100Mbps, or 0 for unlimited)");
  };
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0) bad();
  std::string_view unit(end, s.data() + s.size() - end);
  if (unit.empty()) {
    if (value != 0) bad();  // a bare number is ambiguous unless it is 0
    return {};
  }
  double scale = 1;
  switch (unit.front()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e9;
      break;
    default:
      scale = 1;
  }
  if (scale != 1) unit.remove_prefix(1);
  GeneratorRate r;
  if (unit == "pps")
    r.unit = GeneratorRate::Unit::packets_per_sec;
  else if (unit == "bps")
    r.unit = GeneratorRate::Unit::bits_per_sec;
  else
    bad();
  if (value == 0) return {};
  r.per_sec = value * scale;
  return r;
}

namespace {

uint32_t parse_size_number(const ConfigNode& node, std::string_view text) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    node.fail("bad frame size '" + std::string(text) + "' (expected 64, imix, or 64-1518)");
  if (v < kMinGeneratedFrame || v > kMaxGeneratedFrame)
    node.fail("frame size " + std::to_string(v) + " out of range [" +
              std::to_string(kMinGeneratedFrame) + ", " + std::to_string(kMaxGeneratedFrame) + "]");
  return v;
}

}  // namespace

FrameSizes parse_frame_sizes(const ConfigNode& node) {
  const std::string s = node.as_string();
  FrameSizes f;
  if (s == "imix") {
    f.kind = FrameSizes::Kind::imix;
    f.min = 64;
    f.max = 1518;
    return f;
  }
  size_t dash = s.find('-');
  if (dash == std::string::npos) {
    f.kind = FrameSizes::Kind::fixed;
    f.min = f.max = parse_size_number(node, s);
    return f;
  }
  f.kind = FrameSizes::Kind::range;
  f.min = parse_size_number(node, std::string_view(s).substr(0, dash));
  f.max = parse_size_number(node, std::string_view(s).substr(dash + 1));
  if (f.min > f.max) node.fail("frame size range '" + s + "' has its bounds reversed");
  if (f.min == f.max) f.kind = FrameSizes::Kind::fixed;
  return f;
}

}  // namespace gpunfv
