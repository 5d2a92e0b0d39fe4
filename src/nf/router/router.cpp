#include "nf/router/router.h"

#include <set>
#include <stdexcept>

#include "nf/router/route_file.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

namespace {

std::vector<Ipv4Prefix> prefixes_of(const std::vector<Route>& routes) {
  std::vector<Ipv4Prefix> out;
  out.reserve(routes.size());
  for (const Route& r : routes) out.push_back(r.prefix);
  return out;
}

std::vector<uint32_t> next_hops_of(const std::vector<Route>& routes) {
  std::vector<uint32_t> out;
  out.reserve(routes.size());
  for (const Route& r : routes) out.push_back(r.next_hop);
  return out;
}

// The `spread:` list of a prefix-list table: port names, each of which must exist.
RouteTable spread_table(const ConfigNode& spread, const std::string& file, const ReadLimit& limit,
                        const PortIdOf& port_id_of) {
  RouteTable table;
  for (const ConfigNode& item : spread.items()) {
    std::string port = item.as_string();
    std::optional<uint16_t> id = port_id_of ? port_id_of(port) : std::nullopt;
    if (!id) item.fail("unknown port '" + port + "' in spread:");
    table.next_hop_names.push_back(port);
    table.next_hop_ports.push_back(*id);
  }
  if (table.next_hop_ports.empty()) spread.fail("spread: needs at least one port");
  table.routes = spread_routes(read_prefix_file(file, limit), uint32_t(table.next_hop_ports.size()));
  return table;
}

}  // namespace

Router::Router(std::string name, const std::vector<Route>& routes,
               std::vector<uint16_t> next_hop_ports, std::vector<std::string> next_hop_names,
               uint32_t max_tbl8_groups)
    : NetworkFunction(std::move(name)),
      prefixes_(prefixes_of(routes)),
      route_next_hops_(next_hops_of(routes)),
      lpm_(routes, max_tbl8_groups),
      next_hop_ports_(std::move(next_hop_ports)),
      next_hop_names_(std::move(next_hop_names)) {
  if (next_hop_names_.size() != next_hop_ports_.size())
    throw std::invalid_argument("router: one name per next-hop port expected");
  for (const Route& r : routes)
    if (r.next_hop >= next_hop_ports_.size())
      throw std::invalid_argument("router: route " + format_prefix(r.prefix) +
                                  " has next hop " + std::to_string(r.next_hop) + " of only " +
                                  std::to_string(next_hop_ports_.size()));
}

std::unique_ptr<Router> Router::from_config(const ConfigNode& node, const PortIdOf& port_id_of) {
  node.only_keys({"name", "type", "routes"});
  std::string name = node.str("name");
  if (auto type = node.get("type"); type && type->as_string() != "router")
    type->fail("expected type 'router', got '" + type->as_string() + "'");

  ConfigNode routes = node["routes"];
  RouteTable table;
  if (routes.is_scalar()) {
    table = read_route_file(routes.as_input_file("route file"), port_id_of, routes.read_limit());
  } else if (routes.is_map()) {
    routes.only_keys({"file", "spread"});
    std::string file = routes.input_file("file", "route file");
    const ReadLimit limit = routes["file"].read_limit();
    if (auto spread = routes.get("spread"))
      table = spread_table(*spread, file, limit, port_id_of);
    else
      table = read_route_file(file, port_id_of, limit);
  } else {
    routes.fail("routes: expected a route file path or {file: PATH, spread: [PORT, ...]}");
  }

  try {
    return std::make_unique<Router>(name, table.routes, std::move(table.next_hop_ports),
                                    std::move(table.next_hop_names));
  } catch (const std::length_error& e) {
    routes.fail(std::string("router ") + name + ": " + e.what());
  }
}

std::vector<Route> Router::routes() const {
  std::vector<Route> out;
  out.reserve(prefixes_.size());
  for (size_t i = 0; i < prefixes_.size(); ++i)
    out.push_back(Route{prefixes_[i], route_next_hops_[i]});
  return out;
}

RouterView Router::host_view() const {
  return RouterView{lpm_.ref(),
                    IsoSpan<const uint16_t>(next_hop_ports_.data(), next_hop_ports_.size())};
}

void Router::prepare(Backend backend) {
  if (backend == Backend::cpu) return;
#if GPUNFV_HAVE_CUDA
  lpm_.upload_to_device();
  device_next_hop_ports_.upload(next_hop_ports_);
  device_view_ = RouterView{lpm_.device_ref(), device_next_hop_ports_.span()};
#else
  throw std::runtime_error("router " + name() + ": this build has no GPU backend");
#endif
}

void Router::process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const {
  run_per_packet_cpu(b, begin, end, position, host_view(), RouterLogic{});
}

std::vector<uint16_t> Router::egress_ports() const {
  std::set<uint16_t> ports(next_hop_ports_.begin(), next_hop_ports_.end());
  return std::vector<uint16_t>(ports.begin(), ports.end());
}

std::string Router::command(std::string_view cmd) const {
  constexpr std::string_view kLookup = "lookup ";
  if (cmd.substr(0, kLookup.size()) != kLookup) {
    if (cmd == "describe") return describe();
    return "unknown command '" + std::string(cmd) + "' (try: describe, lookup a.b.c.d)";
  }
  std::string_view text = cmd.substr(kLookup.size());
  auto addr = parse_ipv4(text);
  if (!addr) return std::string(text).append(": not an IPv4 address");
  LpmResult r = lpm_.ref().lookup(*addr);
  if (!r.found) return format_ipv4(*addr) + ": no route";
  return format_ipv4(*addr) + " -> " + next_hop_names_[r.next_hop] + " (port " +
         std::to_string(next_hop_ports_[r.next_hop]) + ")";
}

std::string Router::describe() const {
  size_t ports = egress_ports().size();
  return "router " + name() + ": " + std::to_string(route_count()) + " routes (" +
         std::to_string(lpm_.tbl8_groups_used()) + " tbl8 groups), " +
         std::to_string(ports) + " next-hop port" + (ports == 1 ? "" : "s");
}

}  // namespace gpunfv
