#include "cli/control_commands.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <stdexcept>

#include "core/error.h"
#include "nf/nf_process/nf_process.h"
#include "nf/firewall/firewall.h"
#include "nf/ipsec/ipsec.h"
#include "nf/nids/nids.h"
#include "nf/router/route_file.h"
#include "nf/router/router.h"

namespace gpunfv {

namespace {

// A refused command: its reason goes back to the client as {"ok": false, "error": ...}.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json ok(nlohmann::json j = nlohmann::json::object()) {
  j["ok"] = true;
  return j;
}

nlohmann::json refused(const std::string& why) { return {{"ok", false}, {"error", why}}; }

std::string joined(const std::vector<std::string>& words, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < words.size(); ++i) out += (out.empty() ? "" : " ") + words[i];
  return out;
}

constexpr const char* kSaFields[] = {"spi", "enc_key", "auth_key", "local", "remote", "match"};

// An SA's fields as a YAML map, from FIELD=VALUE words or one JSON object. No message here
// quotes a value or a word: it may hold a key.
YAML::Node sa_fields(const std::vector<std::string>& words) {
  YAML::Node map(YAML::NodeType::Map);
  auto put = [&](const std::string& field, const std::string& value) {
    const YAML::Node& seen = map;  // a const lookup adds no entry
    if (seen[field]) throw Refused("SA field '" + field + "' given twice");
    map[field] = value;
  };
  if (words.size() == 1 && !words[0].empty() && words[0][0] == '{') {
    const nlohmann::json j = nlohmann::json::parse(words[0], nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Refused("the SA is not a JSON object");
    for (const auto& item : j.items()) {
      const std::string& field = item.key();
      const nlohmann::json& value = item.value();
      if (value.is_string())
        put(field, value.get<std::string>());
      else if (value.is_number_unsigned())
        put(field, std::to_string(value.get<uint64_t>()));
      else
        throw Refused("SA field '" + field + "': expected a string or a number");
    }
    return map;
  }
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Refused("SA fields are FIELD=VALUE words (fields: spi, enc_key, auth_key, local, remote, match)");
    const std::string field = w.substr(0, eq);
    // An unknown field's name may be a mistyped key: name only known ones.
    if (std::find(std::begin(kSaFields), std::end(kSaFields), field) == std::end(kSaFields))
      throw Refused("unknown SA field (fields: spi, enc_key, auth_key, local, remote, match)");
    put(field, w.substr(eq + 1));
  }
  return map;
}

std::string spi_word(uint32_t spi) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", spi);
  return buf;
}

uint32_t parse_spi(const std::string& w) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(w.c_str(), &end, 0);
  if (w.empty() || !std::isdigit(static_cast<unsigned char>(w[0])) || *end || errno || v > 0xFFFFFFFFull)
    throw Refused("'" + w + "': not an SPI (a number, 0x for hex)");
  return uint32_t(v);
}

// A port a router may send to: one with a tx side that no forward sends to and that is not a
// GPU ring (those take only the chains they feed), as the configuration's own check requires.
uint16_t run_tx_port(const RuntimeConfig& rc, const std::string& name) {
  for (size_t i = 0; i < rc.ports.size(); ++i) {
    const Port& p = *rc.ports[i];
    if (p.name() != name) continue;
    if (!p.has_tx()) throw Refused("port '" + name + "' has no tx side");
    if (p.type() == "gpuring") throw Refused("port '" + name + "' is a gpuring port: not a route's next hop");
    for (const ForwardSpec& f : rc.forwards)
      if (f.to == i) throw Refused("port '" + name + "' is a forward's target");
    return uint16_t(i);
  }
  throw Refused("unknown port '" + name + "'");
}

}  // namespace

bool looks_like_prefix(const std::string& w) {
  const size_t slash = w.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == w.size()) return false;
  for (size_t i = 0; i < w.size(); ++i)
    if (i != slash && !(std::isdigit(static_cast<unsigned char>(w[i])) || (i < slash && w[i] == '.')))
      return false;
  return true;
}

ControlCommands::ControlCommands(RuntimeConfig& rc, std::function<void()> stop)
    : rc_(&rc), stop_(std::move(stop)) {
  scope_.nfs = &rc.nfs;
  scope_.tx_port = [&rc](const std::string& name) { return run_tx_port(rc, name); };
  scope_.limit = ReadLimit{uint64_t(rc.settings.max_input_file_mb) << 20, ""};
}

nlohmann::json ControlCommands::execute(const nlohmann::json& request) {
  try {
    if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string())
      return refused("a request is a JSON object with \"cmd\" (a string) and \"args\" (strings)");
    std::vector<std::string> args;
    if (request.contains("args")) {
      if (!request["args"].is_array()) return refused("\"args\" must be an array of strings");
      for (const auto& a : request["args"]) {
        if (!a.is_string()) return refused("\"args\" must be an array of strings");
        args.push_back(a.get<std::string>());
      }
    }
    std::string nf;
    if (request.contains("nf")) {
      if (!request["nf"].is_string()) return refused("\"nf\" must be a string");
      nf = request["nf"].get<std::string>();
    }
    const std::string cmd = request["cmd"].get<std::string>();
    const bool table_command = cmd == "routes" || cmd == "firewall" || cmd == "nids" || cmd == "ipsec";
    if (!rc_ && !table_command && cmd != "reload" && cmd != "stats")
      return refused("an NF process takes table commands, reload and stats only");
    if (cmd == "stats") return stats();
    if (cmd == "stop") {
      stop_();
      return ok({{"stopping", true}});
    }
    if (cmd == "reload") return reload(rc_ ? std::string() : nf);
    if (table_command && rc_) {
      const std::string type = cmd == "routes" ? "router" : cmd;
      const std::string name = cmd == "ipsec" ? (args.size() > 2 ? args[2] : std::string()) : nf;
      if (const NfProcessProxy* p = process_nf(type, name)) return hand_on(*p, cmd, args);
    }
    if (cmd == "routes") return routes(args, nf);
    if (cmd == "firewall") return firewall(args, nf);
    if (cmd == "nids") return nids(args, nf);
    if (cmd == "ipsec") return ipsec(args);
    return refused("unknown command '" + cmd +
                   "' (commands: stats, routes, firewall, nids, ipsec, reload, stop)");
  } catch (const Refused& e) {
    return refused(e.what());
  } catch (const ConfigError& e) {
    return refused(e.what());
  } catch (const std::exception& e) {
    return refused(e.what());
  }
}

template <typename T>
T& ControlCommands::find_nf(const std::string& type, const std::string& name) const {
  T* found = nullptr;
  size_t count = 0;  // NFs of the type, those in NF processes too
  for (auto& n : *scope_.nfs) {
    if (n->type() != type) continue;
    ++count;
    auto* t = dynamic_cast<T*>(n.get());
    if (t && (name.empty() || n->name() == name)) found = found ? found : t;
  }
  if (!name.empty() && !found) {
    for (auto& n : *scope_.nfs)
      if (n->name() == name)
        throw Refused("NF '" + name + "' is a " + std::string(n->type()) + " NF; this command is for " + type + " NFs");
    throw Refused("no " + type + " NF named '" + name + "'");
  }
  if (count == 0) throw Refused("the configuration has no " + type + " NF");
  if (name.empty() && count > 1)
    throw Refused("the configuration has " + std::to_string(count) + " " + type +
                  " NFs: name one (--nf NAME)");
  return *found;
}

const NfProcessProxy* ControlCommands::process_nf(const std::string& type, const std::string& name) const {
  const NfProcessProxy* in_process = nullptr;
  size_t count = 0;
  for (auto& n : *scope_.nfs) {
    if (n->type() != type) continue;
    ++count;
    auto* p = dynamic_cast<const NfProcessProxy*>(n.get());
    if (!name.empty() && n->name() == name) return p;
    if (name.empty() && p) in_process = p;
  }
  return name.empty() && count == 1 ? in_process : nullptr;  // else find_nf() says why
}

nlohmann::json ControlCommands::hand_on(const NfProcessProxy& nf, const std::string& cmd,
                                        const std::vector<std::string>& args) const {
  // The ports as this run sees them: the process knows no ports of its own.
  nlohmann::json ports = nlohmann::json::object();
  for (const auto& port : rc_->ports) {
    try {
      ports[port->name()] = tx_port(port->name());
    } catch (const std::exception& e) {
      ports[port->name()] = e.what();
    }
  }
  const nlohmann::json request = {{"cmd", cmd}, {"args", args}, {"nf", nf.name()}, {"ports", ports},
                                  {"max_input_bytes", scope_.limit.max_bytes}};
  const std::string process = nf.nf_process().name();
  std::string reply;
  if (!nf.control(request.dump(), reply))
    throw Refused("NF process " + process + " is being started again; try again");
  nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ok"))
    throw Refused("NF process " + process + " answered with no reply");
  return j;
}

uint16_t ControlCommands::tx_port(const std::string& name) const { return scope_.tx_port(name); }

nlohmann::json ControlCommands::stats() const {
  nlohmann::json j = ok();
  {
    std::lock_guard<std::mutex> lk(stats_m_);
    j["running"] = stats_ != nullptr;
    nlohmann::json ports = nlohmann::json::array();
    if (stats_)
      for (const auto& p : stats_->ports)
        ports.push_back({{"name", p->name}, {"rx_packets", p->rx_packets.load()},
                         {"tx_packets", p->tx_packets.load()}, {"forwarded", p->forwarded.load()},
                         {"dropped", p->dropped_total.load()}});
    j["ports"] = std::move(ports);
  }
  nlohmann::json nfs = nlohmann::json::array();
  for (const auto& n : *scope_.nfs) {
    nlohmann::json e = {{"name", n->name()}, {"type", std::string(n->type())}};
    if (auto* p = dynamic_cast<const NfProcessProxy*>(n.get()); p && rc_) {
      // Its tables are its process's: that process says what they hold.
      e["process"] = p->nf_process().name();
      try {
        const nlohmann::json j = hand_on(*p, "stats", {});
        for (const auto& x : j.value("nfs", nlohmann::json::array()))
          if (x.value("name", std::string()) == n->name()) e.update(x);
      } catch (const std::exception& ex) {
        e["error"] = ex.what();
      }
    } else if (auto* r = dynamic_cast<const Router*>(n.get())) {
      e["routes"] = r->route_count();
      e["table_version"] = r->live().log().latest();
      e["table_versions"] = r->live().log().json();
    } else if (auto* f = dynamic_cast<const Firewall*>(n.get())) {
      nlohmann::json rep = nlohmann::json::object();
      e["rules"] = f->rule_count();
      f->report(rep);
      e["table_version"] = rep["table_version"];
      e["table_versions"] = rep["table_versions"];
    } else if (auto* ids = dynamic_cast<const Nids*>(n.get())) {
      e["rules"] = ids->rules().rules.size();
      e["table_version"] = ids->table_version();
      e["table_versions"] = ids->table_versions()->json();
    } else if (auto* gw = dynamic_cast<const IpsecGateway*>(n.get())) {
      e["sas"] = gw->table().size();
      e["table_version"] = gw->table_version();
      e["table_versions"] = gw->table_versions()->json();
    }
    nfs.push_back(std::move(e));
  }
  j["nfs"] = std::move(nfs);
  return j;
}

nlohmann::json ControlCommands::routes(const std::vector<std::string>& args, const std::string& nf) {
  const char* usage =
      "usage: routes add|del|replace PREFIX/LEN PORT ... (del: PREFIX/LEN ...) or routes add|del|replace FILE";
  if (args.size() < 2) throw Refused(usage);
  const std::string& op = args[0];
  if (op != "add" && op != "del" && op != "replace") throw Refused(usage);
  Router& router = find_nf<Router>("router", nf);
  const std::string what = "routes " + joined(args);
  const bool single = args.size() > 2 || looks_like_prefix(args[1]);
  uint64_t version = 0;
  if (!single) {  // a file
    if (args.size() != 2) throw Refused(usage);
    const std::string& file = args[1];
    if (op == "del") {
      std::vector<Router::RouteUpdate> dels;
      for (const Ipv4Prefix& p : read_prefix_file(file, scope_.limit)) dels.push_back({p, std::nullopt, ""});
      version = router.update(dels, what);
    } else {
      RouteTable t = read_route_file(file, [&](const std::string& port) -> std::optional<uint16_t> {
        return tx_port(port);
      }, scope_.limit);
      if (op == "replace") {
        version = router.replace(t, what);
      } else {
        std::vector<Router::RouteUpdate> adds;
        for (const Route& r : t.routes)
          adds.push_back({r.prefix, t.next_hop_ports[r.next_hop], t.next_hop_names[r.next_hop]});
        version = router.update(adds, what);
      }
    }
  } else {
    std::vector<Router::RouteUpdate> changes;
    const size_t step = op == "del" ? 1 : 2;
    if ((args.size() - 1) % step != 0) throw Refused(usage);
    for (size_t i = 1; i < args.size(); i += step) {
      auto p = parse_ipv4_prefix(args[i]);
      if (!p) throw Refused("'" + args[i] + "': not a prefix a.b.c.d/len without host bits");
      if (op == "del") {
        changes.push_back({*p, std::nullopt, ""});
        continue;
      }
      if (op == "replace" && !router.live().find(*p))
        throw Refused(args[i] + ": no such route (routes add makes one)");
      changes.push_back({*p, tx_port(args[i + 1]), args[i + 1]});
    }
    version = router.update(changes, what);
  }
  return ok({{"nf", router.name()}, {"table_version", version}, {"routes", router.route_count()}});
}

nlohmann::json ControlCommands::firewall(const std::vector<std::string>& args, const std::string& nf) {
  if (args.size() != 2 || args[0] != "replace") throw Refused("usage: firewall replace RULE_FILE");
  Firewall& fw = find_nf<Firewall>("firewall", nf);
  const uint64_t version = fw.replace_rules(args[1], scope_.limit);
  return ok({{"nf", fw.name()}, {"table_version", version}, {"rules", fw.rule_count()}});
}

nlohmann::json ControlCommands::nids(const std::vector<std::string>& args, const std::string& nf) {
  if (args.size() < 2 || args[0] != "replace") throw Refused("usage: nids replace RULE_FILE [RULE_FILE...]");
  Nids& ids = find_nf<Nids>("nids", nf);
  const uint64_t version =
      ids.replace_rules(std::vector<std::string>(args.begin() + 1, args.end()), scope_.limit);
  return ok({{"nf", ids.name()}, {"table_version", version}, {"rules", ids.rules().rules.size()}});
}

nlohmann::json ControlCommands::ipsec(const std::vector<std::string>& args) {
  const char* usage =
      "usage: ipsec sa add NF spi=SPI enc_key=HEX auth_key=HEX local=ADDR remote=ADDR "
      "[match=PREFIX/LEN] (or one JSON object with those fields) | ipsec sa del NF SPI";
  if (args.size() < 3 || args[0] != "sa" || (args[1] != "add" && args[1] != "del")) throw Refused(usage);
  IpsecGateway& gw = find_nf<IpsecGateway>("ipsec", args[2]);
  const std::vector<std::string> fields(args.begin() + 3, args.end());
  if (args[1] == "del") {
    if (fields.size() != 1) throw Refused(usage);
    const uint32_t spi = parse_spi(fields[0]);
    const uint64_t version = gw.delete_sa(spi, "ipsec sa del " + spi_word(spi));
    return ok({{"nf", gw.name()}, {"table_version", version}, {"sas", gw.table().size()}});
  }
  if (fields.empty()) throw Refused(usage);
  // Read as the configuration's SA entries are, with their checks and messages.
  const ConfigNode node(sa_fields(fields), "ipsec sa add");
  esp::SaConfig c = IpsecGateway::sa_from_config(node, gw.direction());
  uint64_t version = 0;
  try {
    version = gw.add_sa(c, "ipsec sa add " + spi_word(c.spi));
  } catch (...) {
    c.enc_key.fill(0), c.nonce.fill(0), c.auth_key.fill(0);
    throw;
  }
  c.enc_key.fill(0), c.nonce.fill(0), c.auth_key.fill(0);
  return ok({{"nf", gw.name()}, {"table_version", version}, {"sas", gw.table().size()}});
}

nlohmann::json ControlCommands::reload(const std::string& only) {
  nlohmann::json results = nlohmann::json::array();
  bool all = true;
  for (auto& n : *scope_.nfs) {
    if (!only.empty() && n->name() != only) continue;
    nlohmann::json r = {{"nf", n->name()}};
    try {
      if (auto* p = dynamic_cast<const NfProcessProxy*>(n.get()); p && rc_) {
        // The process reloads the NF, if it has table files, and says how it went.
        const nlohmann::json j = hand_on(*p, "reload", {});
        const nlohmann::json done = j.value("reloaded", nlohmann::json::array());
        if (done.empty()) {  // an NF without table files (IPsec), or a refusal
          if (!j.value("ok", false)) throw std::runtime_error(j.value("error", std::string("refused")));
          continue;
        }
        r = done[0];
        all = all && r.value("ok", false);
        results.push_back(std::move(r));
        continue;
      }
      if (auto* router = dynamic_cast<Router*>(n.get())) {
        const std::string& file = router->routes_file();
        r["file"] = file;
        RouteTable t;
        if (!router->spread_ports().empty()) {
          std::vector<uint16_t> ports;
          for (const std::string& name : router->spread_ports()) ports.push_back(tx_port(name));
          t.routes = spread_routes(read_prefix_file(file, scope_.limit), uint32_t(ports.size()));
          t.next_hop_names = router->spread_ports();
          t.next_hop_ports = ports;
        } else {
          t = read_route_file(file, [&](const std::string& port) -> std::optional<uint16_t> {
            return tx_port(port);
          }, scope_.limit);
        }
        r["table_version"] = router->replace(t, "reload " + file);
      } else if (auto* fw = dynamic_cast<Firewall*>(n.get())) {
        r["file"] = fw->rules_file();
        r["table_version"] = fw->replace_rules(fw->rules_file(), scope_.limit, "reload " + fw->rules_file());
      } else if (auto* ids = dynamic_cast<Nids*>(n.get())) {
        std::string what = "reload";
        for (const std::string& f : ids->rule_files()) what += " " + f;
        r["files"] = ids->rule_files();
        r["table_version"] = ids->replace_rules(ids->rule_files(), scope_.limit, what);
      } else {
        continue;
      }
      r["ok"] = true;
    } catch (const std::exception& e) {
      r["ok"] = false;
      r["error"] = e.what();
      all = false;
    }
    results.push_back(std::move(r));
  }
  nlohmann::json j = {{"ok", all}, {"reloaded", results}};
  if (!all) j["error"] = "some tables were not reloaded (each kept its live table)";
  return j;
}

std::function<std::string(const std::string&)> nf_process_control(
    std::vector<std::unique_ptr<NetworkFunction>>& nfs) {
  return [&nfs](const std::string& text) -> std::string {
    const nlohmann::json request = nlohmann::json::parse(text, nullptr, false);
    if (request.is_discarded() || !request.is_object())
      return refused("a control request that is not a JSON object").dump();
    ControlScope scope;
    scope.nfs = &nfs;
    // Each port as gpunfv run sees it: its id, or why a route may not send there.
    const nlohmann::json ports = request.value("ports", nlohmann::json::object());
    scope.tx_port = [ports](const std::string& name) -> uint16_t {
      const auto it = ports.find(name);
      if (it == ports.end()) throw Refused("unknown port '" + name + "'");
      if (it->is_string()) throw Refused(it->get<std::string>());
      return it->get<uint16_t>();
    };
    scope.limit.max_bytes = request.value("max_input_bytes", scope.limit.max_bytes);
    return ControlCommands(std::move(scope)).execute(request).dump();
  };
}

}  // namespace gpunfv
