#include "core/drop_reason.h"

#include <array>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

namespace gpunfv {

namespace {

struct DropReasonTable {
  std::array<DropReasonDecl, kMaxDropReasons> decls{{
#define GPUNFV_X(id, desc) {#id, desc},
      GPUNFV_DROP_REASONS(GPUNFV_X)
#undef GPUNFV_X
  }};
  // Entries below `count` are written once, before `count` passes them (readers take no lock).
  std::atomic<int> count{kFrameworkDropReasons};
  std::mutex add_m;
};

DropReasonTable& table() {
  static DropReasonTable t;
  return t;
}

}  // namespace

uint8_t add_drop_reasons(std::string_view owner, std::span<const DropReasonDecl> reasons) {
  DropReasonTable& t = table();
  std::lock_guard<std::mutex> lk(t.add_m);
  const int first = t.count.load(std::memory_order_relaxed);
  if (first + int(reasons.size()) > kMaxDropReasons)
    throw std::logic_error(std::string(owner) + ": more than " + std::to_string(kMaxDropReasons) +
                           " drop reasons in one run");
  for (const DropReasonDecl& d : reasons)
    for (int c = 0; c < first; ++c)
      if (std::string_view(t.decls[size_t(c)].name) == d.name)
        throw std::logic_error(std::string(owner) + ": drop reason '" + d.name +
                               "' is already declared");
  for (size_t i = 0; i < reasons.size(); ++i) t.decls[size_t(first) + i] = reasons[i];
  t.count.store(first + int(reasons.size()), std::memory_order_release);
  return uint8_t(first);
}

int drop_reason_count() { return table().count.load(std::memory_order_acquire); }

std::string_view drop_reason_name(DropReason r) {
  return int(r) < drop_reason_count() ? table().decls[size_t(r)].name : "unknown";
}

std::string_view drop_reason_description(DropReason r) {
  return int(r) < drop_reason_count() ? table().decls[size_t(r)].description : "unknown";
}

}  // namespace gpunfv
