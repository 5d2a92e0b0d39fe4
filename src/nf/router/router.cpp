#include "nf/router/router.h"

#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "nf/nf_registry.h"
#include "nf/router/route_file.h"
#include "nf/run_per_packet.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/gpu_calls.h"
#endif

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
      live_(routes, max_tbl8_groups),
      next_hop_ports_(std::move(next_hop_ports)),
      next_hops_(uint32_t(next_hop_ports_.size())),
      next_hop_names_(std::move(next_hop_names)) {
  if (next_hop_names_.size() != next_hop_ports_.size())
    throw std::invalid_argument("router: one name per next-hop port expected");
  if (next_hop_ports_.size() > kMaxNextHops)
    throw std::length_error("router: more than " + std::to_string(kMaxNextHops) + " next-hop ports");
  next_hop_ports_.resize(kMaxNextHops, kNoPort);
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
  std::string file;
  bool spread = false;
  if (routes.is_scalar()) {
    file = routes.as_input_file("route file");
    table = read_route_file(file, port_id_of, routes.read_limit());
  } else if (routes.is_map()) {
    routes.only_keys({"file", "spread"});
    file = routes.input_file("file", "route file");
    const ReadLimit limit = routes["file"].read_limit();
    if (auto list = routes.get("spread")) {
      table = spread_table(*list, file, limit, port_id_of);
      spread = true;
    } else {
      table = read_route_file(file, port_id_of, limit);
    }
  } else {
    routes.fail("routes: expected a route file path or {file: PATH, spread: [PORT, ...]}");
  }

  try {
    auto names = table.next_hop_names;
    auto r = std::make_unique<Router>(name, table.routes, std::move(table.next_hop_ports),
                                      std::move(table.next_hop_names));
    r->routes_file_ = file;
    if (spread) r->spread_names_ = std::move(names);
    return r;
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

RouterView Router::view_of(const Dir24_8& t) const {
  return RouterView{t.ref(), IsoSpan<const uint16_t>(next_hop_ports_.data(), next_hop_ports_.size())};
}

RouterView Router::host_view() const { return view_of(live_.live_table()); }

void Router::prepare(Backend backend) {
  if (backend == Backend::cpu) return;
#if GPUNFV_HAVE_CUDA
  prepare_gpu_updates();
#else
  throw std::runtime_error("router " + name() + ": this build has no GPU backend");
#endif
}

void Router::process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const {
  // One table version for the whole batch, held until its lookups are done.
  LiveRouteTable::Pin pin = live_.pin();
  pin.count(run_per_packet_cpu(b, begin, end, position, view_of(pin.table()), RouterLogic{},
                               first_drop_code<RouterDrop>()));
}

std::vector<uint16_t> Router::egress_ports() const {
  std::set<uint16_t> ports(next_hop_ports_.begin(), next_hop_ports_.begin() + next_hops_.load());
  return std::vector<uint16_t>(ports.begin(), ports.end());
}

uint32_t Router::next_hop_for(uint16_t port, const std::string& port_name) {
  const uint32_t n = next_hops_.load();
  for (uint32_t i = 0; i < n; ++i)
    if (next_hop_ports_[i] == port) return i;
  if (n >= kMaxNextHops)
    throw std::invalid_argument("router " + name() + ": more than " + std::to_string(kMaxNextHops) +
                                " next-hop ports");
  // Written before any route names it; published with the table version that does.
  next_hop_ports_[n] = port;
#if GPUNFV_HAVE_CUDA
  if (device_next_hop_ports_.size()) {
    gpu::copy_to_device(device_next_hop_ports_.data() + n, &port, sizeof port, update_stream_);
    gpu::synchronize(update_stream_);
  }
#endif
  {
    std::lock_guard<std::mutex> lk(names_m_);
    next_hop_names_.push_back(port_name);
  }
  next_hops_.store(n + 1);
  return n;
}

std::vector<LiveRouteTable::Change> Router::changes_of(const std::vector<RouteUpdate>& updates) {
  std::vector<LiveRouteTable::Change> out;
  out.reserve(updates.size());
  for (const RouteUpdate& u : updates)
    out.push_back(LiveRouteTable::Change{
        u.prefix, u.port ? std::optional<uint32_t>(next_hop_for(*u.port, u.port_name)) : std::nullopt});
  return out;
}

uint64_t Router::update(const std::vector<RouteUpdate>& updates, const std::string& what) {
  return live_.apply(changes_of(updates), what);
}

uint64_t Router::replace(const RouteTable& table, const std::string& what) {
  std::vector<RouteUpdate> wanted;
  wanted.reserve(table.routes.size());
  for (const Route& r : table.routes)
    wanted.push_back(RouteUpdate{r.prefix, table.next_hop_ports.at(r.next_hop),
                                 table.next_hop_names.at(r.next_hop)});
  std::vector<Route> routes;
  routes.reserve(wanted.size());
  for (const LiveRouteTable::Change& c : changes_of(wanted)) routes.push_back(Route{c.prefix, *c.next_hop});
  return live_.apply(live_.diff_to(routes), what);
}

#if !GPUNFV_HAVE_CUDA
void Router::finish() {}
#endif

void Router::report(nlohmann::json& j) const {
  j["routes"] = live_.route_count();
  j["table_version"] = live_.log().latest();
  j["table_versions"] = live_.log().json();
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
  LiveRouteTable::Pin pin = live_.pin();
  LpmResult r = pin.table().ref().lookup(*addr);
  if (!r.found) return format_ipv4(*addr) + ": no route";
  std::lock_guard<std::mutex> lk(names_m_);
  return format_ipv4(*addr) + " -> " + next_hop_names_[r.next_hop] + " (port " +
         std::to_string(next_hop_ports_[r.next_hop]) + ")";
}

std::string Router::describe() const {
  size_t ports = egress_ports().size();
  return "router " + name() + ": " + std::to_string(route_count()) + " routes (" +
         std::to_string(table().tbl8_groups_used()) + " tbl8 groups), " +
         std::to_string(ports) + " next-hop port" + (ports == 1 ? "" : "s");
}

GPUNFV_REGISTER_NF("router", Router);

}  // namespace gpunfv
