#include "nf/nf_registry.h"

#include <algorithm>
#include <map>

namespace gpunfv {

namespace {

// A function-local map: registrations run during static initialisation, in any order.
std::map<std::string, NfFactory>& registry() {
  static std::map<std::string, NfFactory> r;
  return r;
}

}  // namespace

bool NfRegistry::add(const std::string& type, NfFactory factory) {
  return registry().emplace(type, factory).second;
}

NfFactory NfRegistry::find(const std::string& type) {
  auto it = registry().find(type);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> NfRegistry::types() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : registry()) out.push_back(name);
  return out;
}

}  // namespace gpunfv
