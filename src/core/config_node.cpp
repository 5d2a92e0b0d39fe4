#include "core/config_node.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

namespace gpunfv {

ConfigNode ConfigNode::operator[](const std::string& key) const {
  if (!node_.IsMap()) fail("expected a map with key '" + key + "'");
  YAML::Node n = node_[key];
  if (!n) fail("missing key '" + key + "'");
  return child(n);
}

std::optional<ConfigNode> ConfigNode::get(const std::string& key) const {
  if (!node_.IsMap()) return std::nullopt;
  YAML::Node n = node_[key];
  if (!n || n.IsNull()) return std::nullopt;
  return child(n);
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence()) fail("expected a list");
  std::vector<ConfigNode> out;
  for (const auto& n : node_) out.push_back(child(n));
  return out;
}

std::string ConfigNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a single value");
  return node_.Scalar();
}

int64_t ConfigNode::as_int(int64_t min, int64_t max) const {
  std::string s = as_string();
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used, 0);
  } catch (...) {
    fail("'" + s + "' is not an integer");
  }
  if (used != s.size()) fail("'" + s + "' is not an integer");
  if (v < min || v > max)
    fail("value " + s + " out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

double ConfigNode::as_double() const {
  std::string s = as_string();
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    fail("'" + s + "' is not a number");
  }
  if (used != s.size()) fail("'" + s + "' is not a number");
  return v;
}

bool ConfigNode::as_bool() const {
  std::string s = as_string();
  if (s == "true" || s == "on" || s == "yes") return true;
  if (s == "false" || s == "off" || s == "no") return false;
  fail("'" + s + "' is not a boolean (true/false, on/off)");
}

std::string ConfigNode::str_or(const std::string& key, const std::string& dflt) const {
  auto n = get(key);
  return n ? n->as_string() : dflt;
}

int64_t ConfigNode::int_or(const std::string& key, int64_t dflt, int64_t min, int64_t max) const {
  auto n = get(key);
  return n ? n->as_int(min, max) : dflt;
}

std::string ConfigNode::resolve_path(const std::string& p) const {
  namespace fs = std::filesystem;
  if (p.empty() || fs::path(p).is_absolute()) return p;
  fs::path base = fs::path(file_).parent_path();
  return (base / p).lexically_normal().string();
}

std::string ConfigNode::path(const std::string& key) const { return resolve_path(str(key)); }

std::string ConfigNode::input_file(const std::string& key, const std::string& kind) const {
  return (*this)[key].as_input_file(kind);
}

std::string ConfigNode::as_input_file(const std::string& kind) const {
  const std::string p = resolve_path(as_string());
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) fail(p + ": cannot open " + kind + ": is a folder");
  if (access(p.c_str(), R_OK) != 0) fail(p + ": cannot open " + kind + ": " + std::strerror(errno));
  return p;
}

void ConfigNode::only_keys(std::initializer_list<const char*> allowed) const {
  if (!node_.IsMap()) fail("expected a map");
  for (const auto& kv : node_) {
    std::string k = kv.first.Scalar();
    bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; });
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      throw ConfigError(gpunfv::where(file_, kv.first.Mark().line + 1),
                        "unknown key '" + k + "' (expected one of: " + list + ")");
    }
  }
}

void reject_duplicate_keys(const YAML::Node& root, const std::string& file) {
  if (root.IsSequence())
    for (const YAML::Node& item : root) reject_duplicate_keys(item, file);
  if (!root.IsMap()) return;
  std::map<std::string, long> first_line;
  for (const auto& kv : root) {
    if (kv.first.IsScalar()) {
      const long line = kv.first.Mark().line + 1;
      auto [it, is_new] = first_line.try_emplace(kv.first.Scalar(), line);
      if (!is_new)
        throw ConfigError(gpunfv::where(file, line), "duplicate key '" + kv.first.Scalar() +
                                                         "' (first at line " + std::to_string(it->second) + ")");
    }
    reject_duplicate_keys(kv.second, file);
  }
}

}  // namespace gpunfv
