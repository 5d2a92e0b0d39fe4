#include "nf/nf_registry.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace gpunfv {

namespace {

// Function-local: registrations run during static initialisation, in any order, and when a
// plugin is loaded.
struct Registry {
  std::mutex m;
  std::map<std::string, NfFactory> factories;
  std::vector<NfRegistry::Attempt> attempts;
};
Registry& state() {
  static Registry r;
  return r;
}
std::map<std::string, NfFactory>& registry() { return state().factories; }

}  // namespace

bool NfRegistry::add(const std::string& type, NfFactory factory) {
  std::lock_guard<std::mutex> lk(state().m);
  const bool added = registry().emplace(type, factory).second;
  state().attempts.push_back({type, added});
  return added;
}

std::vector<NfRegistry::Attempt> NfRegistry::attempts(size_t from) {
  std::lock_guard<std::mutex> lk(state().m);
  const auto& a = state().attempts;
  return std::vector<Attempt>(a.begin() + std::min(from, a.size()), a.end());
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
