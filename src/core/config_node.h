// A YAML node that knows its file and line, so every configuration error can name them.
// Thin wrapper over yaml-cpp; all NF and port parsers read their keys through it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/text_file.h"

namespace gpunfv {

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::string file) : node_(std::move(node)), file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  long line() const { return node_.Mark().line >= 0 ? node_.Mark().line + 1 : context_line_; }
  std::string where() const { return gpunfv::where(file_, line()); }
  [[noreturn]] void fail(const std::string& what) const { throw ConfigError(where(), what); }

  bool has(const std::string& key) const { return node_.IsMap() && node_[key]; }
  ConfigNode operator[](const std::string& key) const;  // must exist
  std::optional<ConfigNode> get(const std::string& key) const;
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  std::vector<ConfigNode> items() const;  // elements of a sequence (fails otherwise)

  std::string as_string() const;
  int64_t as_int(int64_t min, int64_t max) const;
  double as_double() const;
  bool as_bool() const;

  std::string str(const std::string& key) const { return (*this)[key].as_string(); }
  std::string str_or(const std::string& key, const std::string& dflt) const;
  int64_t int_or(const std::string& key, int64_t dflt, int64_t min, int64_t max) const;

  // Resolves a path given in the config relative to the config file's folder.
  std::string path(const std::string& key) const;
  std::string resolve_path(const std::string& p) const;
  // The same for a file the run reads (`kind`: "route file", ...), failing at this config line
  // when it cannot be opened: the error names the config line as well as the file.
  std::string input_file(const std::string& key, const std::string& kind) const;
  std::string as_input_file(const std::string& kind) const;
  // How much of a file this node names may be read (settings.max_input_file_mb, which the
  // config's loader sets on the root and every node inherits); the error names this line.
  ReadLimit read_limit() const { return ReadLimit{max_input_bytes_, where()}; }
  void set_max_input_bytes(uint64_t bytes) { max_input_bytes_ = bytes; }
  // `other` (a node built in code from this one's parts) read as part of this node's file; where
  // it has no line of its own, errors name this node's.
  ConfigNode in_context(YAML::Node other) const {
    ConfigNode c = child(std::move(other));
    c.context_line_ = line();
    return c;
  }

  // Fails on keys of a map that are not in `allowed` (catches typos such as `rotes:`).
  void only_keys(std::initializer_list<const char*> allowed) const;

  const YAML::Node& yaml() const { return node_; }

 private:
  ConfigNode child(YAML::Node n) const {
    ConfigNode c(std::move(n), file_);
    c.max_input_bytes_ = max_input_bytes_;
    return c;
  }

  YAML::Node node_;
  std::string file_;
  uint64_t max_input_bytes_ = kDefaultMaxInputFileMb << 20;
  long context_line_ = 0;
};

// Fails (ConfigError at the second one's line) on a key repeated in a map anywhere under
// `root`: yaml-cpp keeps both and reads the first, so the second would be silently ignored.
void reject_duplicate_keys(const YAML::Node& root, const std::string& file);

}  // namespace gpunfv
