#include "nf/router/route_file.h"

#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "core/text_file.h"

namespace gpunfv {

namespace {

// Parses the prefix field; rejects malformed prefixes, host bits and repeats.
class PrefixParser {
 public:
  explicit PrefixParser(std::string path) : path_(std::move(path)) {}

  Ipv4Prefix parse(std::string_view text, long line) {
    auto p = parse_ipv4_prefix(text);
    if (!p) {
      // Address and length each valid on their own: the address has bits past the length.
      size_t slash = text.find('/');
      auto addr = slash == std::string_view::npos ? std::nullopt : parse_ipv4(text.substr(0, slash));
      auto len_only = addr ? parse_ipv4_prefix("0.0.0.0" + std::string(text.substr(slash)))
                           : std::nullopt;
      if (len_only) {
        uint32_t mask = len_only->len == 0 ? 0 : ~uint32_t(0) << (32 - len_only->len);
        fail(line, "prefix '" + std::string(text) + "' has host bits set (did you mean " +
                       format_prefix(Ipv4Prefix{*addr & mask, len_only->len}) + "?)");
      }
      fail(line, "bad prefix '" + std::string(text) + "', expected a.b.c.d/len");
    }
    uint64_t key = (uint64_t(p->addr) << 8) | p->len;
    auto [it, inserted] = first_line_.try_emplace(key, line);
    if (!inserted)
      fail(line, "duplicate route " + format_prefix(*p) + " (first at line " +
                     std::to_string(it->second) + ")");
    return *p;
  }

  [[noreturn]] void fail(long line, const std::string& what) const {
    throw ConfigError(where(path_, line), what);
  }

 private:
  std::string path_;
  std::unordered_map<uint64_t, long> first_line_;
};

}  // namespace

RouteTable read_route_file(const std::string& path, const PortIdOf& port_id_of,
                           const ReadLimit& limit) {
  std::string text = read_text_file(path, "route file", limit);
  PrefixParser parser(path);
  RouteTable table;
  std::unordered_map<std::string, uint32_t> next_hop_of_name;
  for_each_field_line(text, [&](long line, const std::vector<std::string_view>& f) {
    Ipv4Prefix prefix = parser.parse(f[0], line);
    if (f.size() < 2) parser.fail(line, "missing next hop (port name) after " + std::string(f[0]));
    if (f.size() > 2)
      parser.fail(line, "unexpected '" + std::string(f[2]) + "' after the next hop");
    std::string port(f[1]);
    auto [it, is_new] = next_hop_of_name.try_emplace(port, uint32_t(table.next_hop_names.size()));
    if (is_new) {
      std::optional<uint16_t> id = port_id_of ? port_id_of(port) : std::nullopt;
      if (!id) parser.fail(line, "unknown port '" + port + "' as next hop");
      table.next_hop_names.push_back(port);
      table.next_hop_ports.push_back(*id);
    }
    table.routes.push_back(Route{prefix, it->second});
  });
  return table;
}

std::vector<Ipv4Prefix> read_prefix_file(const std::string& path, const ReadLimit& limit) {
  std::string text = read_text_file(path, "route file", limit);
  PrefixParser parser(path);
  std::vector<Ipv4Prefix> prefixes;
  for_each_field_line(text, [&](long line, const std::vector<std::string_view>& f) {
    Ipv4Prefix prefix = parser.parse(f[0], line);
    if (f.size() > 1)
      parser.fail(line, "unexpected '" + std::string(f[1]) +
                            "' after the prefix (a prefix list has no next hops; the "
                            "config's spread: ports choose them)");
    prefixes.push_back(prefix);
  });
  return prefixes;
}

uint32_t fnv1a_32_prefix(const Ipv4Prefix& p) {
  const uint8_t bytes[5] = {uint8_t(p.addr >> 24), uint8_t(p.addr >> 16), uint8_t(p.addr >> 8),
                            uint8_t(p.addr), p.len};
  uint32_t h = 2166136261u;  // FNV offset basis
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 16777619u;  // FNV prime
  }
  return h;
}

std::vector<Route> spread_routes(const std::vector<Ipv4Prefix>& prefixes, uint32_t port_count) {
  std::vector<Route> routes;
  routes.reserve(prefixes.size());
  for (const Ipv4Prefix& p : prefixes) routes.push_back(Route{p, spread_index(p, port_count)});
  return routes;
}

}  // namespace gpunfv
