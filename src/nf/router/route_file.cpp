#include "nf/router/route_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "core/error.h"

namespace gpunfv {

namespace {

// The whole (decompressed) file; route tables are at most a few tens of MiB of text.
std::string read_all(const std::string& path) {
  errno = 0;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(path.c_str(), "rb"), gzclose);
  if (!in) {
    throw ConfigError(path, std::string("cannot open route file: ") +
                                (errno ? std::strerror(errno) : "out of memory"));
  }
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    int n = gzread(in.get(), chunk, sizeof chunk);
    if (n < 0) {
      int zerr = 0;
      const char* msg = gzerror(in.get(), &zerr);
      if (zerr == Z_ERRNO) msg = std::strerror(errno);
      throw ConfigError(path, std::string("cannot read route file: ") + msg);
    }
    if (n == 0) break;
    text.append(chunk, size_t(n));
  }
  return text;
}

// Splits a line (comment removed) into whitespace-separated fields.
std::vector<std::string_view> fields_of(std::string_view line) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Calls fn(line_number, fields) for every line that has fields.
template <typename Fn>
void for_each_line(const std::string& text, Fn fn) {
  std::string_view rest(text);
  long line_no = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    auto fields = fields_of(line);
    if (!fields.empty()) fn(line_no, fields);
  }
}

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

RouteTable read_route_file(const std::string& path, const PortIdOf& port_id_of) {
  std::string text = read_all(path);
  PrefixParser parser(path);
  RouteTable table;
  std::unordered_map<std::string, uint32_t> next_hop_of_name;
  for_each_line(text, [&](long line, const std::vector<std::string_view>& f) {
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

std::vector<Ipv4Prefix> read_prefix_file(const std::string& path) {
  std::string text = read_all(path);
  PrefixParser parser(path);
  std::vector<Ipv4Prefix> prefixes;
  for_each_line(text, [&](long line, const std::vector<std::string_view>& f) {
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
