// Route files of the Router NF. Two forms, both read through zlib, so either may be gzipped
// (zlib reads a plain file unchanged):
//
//   with next hops   one route per line, "a.b.c.d/len PORT", PORT a port name of the chain
//   prefix list      one "a.b.c.d/len" per line; next hops come from the config's `spread:`
//                    port list: next hop of a prefix = spread[fnv1a_32(prefix) % spread.size()]
//                    (see spread_index), so a table without next hops still uses every port
//
// '#' starts a comment; blank lines are ignored. A prefix listed twice is an error (a
// hand-written table with a repeated prefix is almost always a mistake). Every error is a
// ConfigError whose message starts with "file:line: "; an unreadable file's names the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ipv4_prefix.h"
#include "core/text_file.h"
#include "nf/router/lpm_dir24_8.h"

namespace gpunfv {

using PortIdOf = std::function<std::optional<uint16_t>(const std::string&)>;

struct RouteTable {
  std::vector<Route> routes;                 // in file order; next_hop indexes the two below
  std::vector<std::string> next_hop_names;   // port name of each next hop
  std::vector<uint16_t> next_hop_ports;      // port id of each next hop
};

// Reads a route file with next hops. Next-hop indices number the distinct port names in order
// of first appearance. `port_id_of` maps a port name to its id (nullopt: unknown port).
// `limit`: how much of the file may be read (core/text_file.h).
RouteTable read_route_file(const std::string& path, const PortIdOf& port_id_of,
                           const ReadLimit& limit = {});

// Reads a prefix list (no next hops), in file order.
std::vector<Ipv4Prefix> read_prefix_file(const std::string& path, const ReadLimit& limit = {});

// FNV-1a (32 bit) over the 4 address bytes, most significant first, then the length byte.
uint32_t fnv1a_32_prefix(const Ipv4Prefix& p);

// Which of `port_count` spread ports a prefix goes to: fnv1a_32_prefix(p) % port_count.
inline uint32_t spread_index(const Ipv4Prefix& p, uint32_t port_count) {
  return fnv1a_32_prefix(p) % port_count;
}

// Routes for a prefix list with `port_count` next hops chosen by spread_index.
std::vector<Route> spread_routes(const std::vector<Ipv4Prefix>& prefixes, uint32_t port_count);

}  // namespace gpunfv
