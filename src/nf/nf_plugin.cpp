#include "nf/nf_plugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "nf/nf_plugin_abi.h"
#include "nf/nf_registry.h"

namespace gpunfv {

std::string load_nf_plugin(const std::string& path) {
  static std::mutex m;
  static std::map<std::string, std::string> loaded;  // canonical path -> its type
  std::lock_guard<std::mutex> lk(m);
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(path, ec).string();
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  const size_t mark = NfRegistry::attempts().size();
  void* library = dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    throw std::runtime_error("cannot load NF plugin " + path + ": " + (why ? why : "unknown error"));
  }
  const auto* abi = static_cast<const char*>(dlsym(library, "gpunfv_nf_abi"));
  if (!abi)
    throw std::runtime_error(path + " is not an NF plugin (not built with gpunfv_add_nf_plugin)");
  if (std::string(abi) != GPUNFV_NF_ABI)
    throw std::runtime_error(path + " was built for " + abi + "; this gpunfv is " + GPUNFV_NF_ABI);
  const auto attempts = NfRegistry::attempts(mark);
  if (attempts.empty()) throw std::runtime_error(path + " registers no NF type");
  if (attempts.size() > 1) {
    std::string names;
    for (const auto& a : attempts) names += (names.empty() ? "" : ", ") + a.type;
    throw std::runtime_error(path + " registers more than one NF type (" + names +
                             "); a plugin holds one");
  }
  if (!attempts[0].added)
    throw std::runtime_error(path + " registers NF type '" + attempts[0].type +
                             "', which is already registered");
  return loaded[key] = attempts[0].type;
}

}  // namespace gpunfv
