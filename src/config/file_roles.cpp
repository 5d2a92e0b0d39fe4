#include "config/internal/file_roles.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpunfv {

namespace {

namespace fs = std::filesystem;

// One name per file, whichever way the config spells it (relative, through a symlink).
std::string same_file_key(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : p.string();
}

// The scalar under `key`, or "" when there is none (the parsers report malformed keys).
std::optional<ConfigNode> scalar_at(const ConfigNode& n, const std::string& key) {
  auto child = n.is_map() ? n.get(key) : std::nullopt;
  if (!child || !child->is_scalar()) return std::nullopt;
  return child;
}

std::string scalar_or_empty(const ConfigNode& n, const std::string& key) {
  auto child = scalar_at(n, key);
  return child ? child->as_string() : std::string();
}

std::vector<ConfigNode> items_or_none(const ConfigNode& root, const std::string& key) {
  auto list = root.is_map() ? root.get(key) : std::nullopt;
  return list && list->is_sequence() ? list->items() : std::vector<ConfigNode>{};
}

struct NamedFile {
  std::string key;    // same_file_key
  std::string path;   // as resolved from the config
  std::string role;   // "the route file of NF 'r1'"
  std::string where;  // config file:line naming it ("" for the configuration itself)
  std::optional<ConfigNode> at;
};

class FileRoles {
 public:
  explicit FileRoles(const std::string& config) {
    inputs_.push_back({same_file_key(config), config, "the configuration file", "", std::nullopt});
  }

  void input(const ConfigNode& path_node, const std::string& role) { add(inputs_, path_node, role); }
  void output(const ConfigNode& path_node, const std::string& role) { add(outputs_, path_node, role); }

  void check() const {
    for (size_t o = 0; o < outputs_.size(); ++o) {
      const NamedFile& out = outputs_[o];
      for (const NamedFile& in : inputs_)
        if (in.key == out.key) clash(out, in, "is also");
      for (size_t earlier = 0; earlier < o; ++earlier)
        if (outputs_[earlier].key == out.key) clash(out, outputs_[earlier], "is also written as");
    }
  }

 private:
  static void add(std::vector<NamedFile>& to, const ConfigNode& n, const std::string& role) {
    const std::string path = n.resolve_path(n.as_string());
    if (!path.empty()) to.push_back({same_file_key(path), path, role, n.where(), n});
  }

  [[noreturn]] static void clash(const NamedFile& out, const NamedFile& other, const std::string& verb) {
    out.at->fail(out.role + " '" + out.path + "' " + verb + " " + other.role +
                 (other.where.empty() ? "" : " (" + other.where + ")"));
  }

  std::vector<NamedFile> inputs_, outputs_;
};

void add_ports(const ConfigNode& root, FileRoles& files) {
  for (const ConfigNode& p : items_or_none(root, "ports")) {
    if (scalar_or_empty(p, "type") != "pcap") continue;  // other ports' rx/tx are interfaces
    const std::string port = "port '" + scalar_or_empty(p, "name") + "'";
    if (auto rx = scalar_at(p, "rx")) files.input(*rx, "the rx capture of " + port);
    if (auto tx = scalar_at(p, "tx")) files.output(*tx, "the tx capture of " + port);
  }
}

// `routes: FILE` or `routes: {file: FILE, ...}` (routers, and a forward's `route:`).
void add_route_file(const ConfigNode& owner, const std::string& key, const std::string& role, FileRoles& files) {
  auto routes = owner.is_map() ? owner.get(key) : std::nullopt;
  if (!routes) return;
  if (routes->is_scalar()) files.input(*routes, role);
  if (auto file = scalar_at(*routes, "file")) files.input(*file, role);
}

void add_nfs(const ConfigNode& root, FileRoles& files) {
  for (const ConfigNode& n : items_or_none(root, "nfs")) {
    const std::string type = scalar_or_empty(n, "type");
    const std::string nf = "NF '" + scalar_or_empty(n, "name") + "'";
    if (type == "router") add_route_file(n, "routes", "the route file of " + nf, files);
    if (type == "firewall" || type == "nids") {
      if (auto rules = scalar_at(n, "rules")) files.input(*rules, "a rule file of " + nf);
      for (const ConfigNode& item : items_or_none(n, "rules"))
        if (item.is_scalar()) files.input(item, "a rule file of " + nf);
    }
    if (type == "nids")
      if (auto alerts = scalar_at(n, "alerts")) files.output(*alerts, "the alert log of " + nf);
  }
}

}  // namespace

void check_file_roles(const ConfigNode& root) {
  FileRoles files(root.file());
  add_ports(root, files);
  add_nfs(root, files);
  for (const ConfigNode& f : items_or_none(root, "forward"))
    add_route_file(f, "route", "the route file of a forward", files);
  if (auto settings = root.is_map() ? root.get("settings") : std::nullopt)
    if (auto model = scalar_at(*settings, "model")) files.input(*model, "the model file");
  files.check();
}

}  // namespace gpunfv
