#include "gpu/kernel_registry.h"

#include <mutex>

namespace gpunfv {

namespace {

struct Registry {
  std::mutex m;
  std::vector<KernelEntry> entries;
};

Registry& registry() {
  static Registry r;  // constructed on first use: registrations run during static initialisation
  return r;
}

// "…/src/nf/router/router.cu" -> "src/nf/router/router.cu" (the compiler may have been given an
// absolute or a relative path).
std::string from_src(const char* file) {
  const std::string f(file);
  const size_t at = f.rfind("src/");
  return at == std::string::npos ? f : f.substr(at);
}

}  // namespace

void register_kernel(const char* name, const void* function, const char* file) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.m);
  r.entries.push_back(KernelEntry{name, function, from_src(file)});
}

std::vector<KernelEntry> registered_kernels() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.m);
  return r.entries;
}

}  // namespace gpunfv
