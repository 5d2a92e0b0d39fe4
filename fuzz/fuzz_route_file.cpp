// Router route files: the input as a route file (read_route_file, ports p1-p4 known) and as a
// prefix list (read_prefix_file). ConfigError is the expected answer to a bad file; what a file
// is accepted with must be a valid table: prefixes without host bits, none twice, next hops
// naming known ports. (The DIR-24-8 table built from a table is checked against a linear
// longest-prefix match by fuzz_router_path, where building its 64 MiB is not paid per input.)
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "nf/router/route_file.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

uint32_t mask_of(uint8_t len) { return len == 0 ? 0 : 0xFFFFFFFFu << (32 - len); }

void check_table(const std::vector<Route>& routes, uint32_t next_hops) {
  for (size_t a = 0; a < routes.size(); ++a) {
    const Ipv4Prefix& p = routes[a].prefix;
    FUZZ_CHECK(p.len <= 32 && (p.addr & ~mask_of(p.len)) == 0);
    FUZZ_CHECK(routes[a].next_hop < next_hops);
    for (size_t b = 0; b < a; ++b) FUZZ_CHECK(!(routes[b].prefix == p));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = write_file("routes.txt", data, size);
  const PortIdOf port_id_of = [](const std::string& name) -> std::optional<uint16_t> {
    if (name.size() == 2 && name[0] == 'p' && name[1] >= '1' && name[1] <= '4')
      return uint16_t(name[1] - '0');
    return std::nullopt;
  };
  try {
    RouteTable t = read_route_file(path, port_id_of, ReadLimit{1 << 20, "fuzz.yaml:1"});
    FUZZ_CHECK(t.next_hop_names.size() == t.next_hop_ports.size());
    for (size_t k = 0; k < t.next_hop_names.size(); ++k)
      FUZZ_CHECK(port_id_of(t.next_hop_names[k]) == t.next_hop_ports[k]);
    check_table(t.routes, uint32_t(t.next_hop_ports.size()));
  } catch (const ConfigError&) {
  }
  try {
    std::vector<Ipv4Prefix> prefixes = read_prefix_file(path, ReadLimit{1 << 20, "fuzz.yaml:1"});
    check_table(spread_routes(prefixes, 3), 3);
  } catch (const ConfigError&) {
  }
  return 0;
}
