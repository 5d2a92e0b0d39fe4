#include "core/drop_reason.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

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
  struct Owned {
    std::string owner;
    int first, n;
  };
  std::vector<Owned> owners;  // under add_m
  DropReasonRegistrar registrar = nullptr;
};

constexpr DropReasonDecl kUnnamed{"unknown", "unknown"};

// The code of `owner`'s reasons if it added these before; -1 if it did not.
int added_before(DropReasonTable& t, std::string_view owner, std::span<const DropReasonDecl> reasons) {
  for (const auto& o : t.owners) {
    if (o.owner != owner) continue;
    bool same = o.n == int(reasons.size());
    for (int i = 0; same && i < o.n; ++i)
      same = std::string_view(t.decls[size_t(o.first + i)].name) == reasons[size_t(i)].name;
    if (!same)
      throw std::logic_error(std::string(owner) + ": its drop reasons differ from those declared before");
    return o.first;
  }
  return -1;
}

DropReasonTable& table() {
  static DropReasonTable t;
  return t;
}

}  // namespace

void set_drop_reason_registrar(DropReasonRegistrar registrar) {
  DropReasonTable& t = table();
  std::lock_guard<std::mutex> lk(t.add_m);
  t.registrar = registrar;
}

uint8_t add_drop_reasons(std::string_view owner, std::span<const DropReasonDecl> reasons) {
  DropReasonTable& t = table();
  std::lock_guard<std::mutex> lk(t.add_m);
  if (const int before = added_before(t, owner, reasons); before >= 0) return uint8_t(before);
  const int count = t.count.load(std::memory_order_relaxed);
  const int first = t.registrar ? int(t.registrar(owner, reasons)) : count;
  if (first < kFrameworkDropReasons || first + int(reasons.size()) > kMaxDropReasons)
    throw std::logic_error(std::string(owner) + ": more than " + std::to_string(kMaxDropReasons) +
                           " drop reasons in one run");
  for (const DropReasonDecl& d : reasons)
    for (int c = 0; c < count; ++c)
      if (std::string_view(t.decls[size_t(c)].name) == d.name && (c < first || c >= first + int(reasons.size())))
        throw std::logic_error(std::string(owner) + ": drop reason '" + d.name +
                               "' is already declared");
  for (int c = count; c < first; ++c) t.decls[size_t(c)] = kUnnamed;  // another process's, unused here
  for (size_t i = 0; i < reasons.size(); ++i) t.decls[size_t(first) + i] = reasons[i];
  t.owners.push_back({std::string(owner), first, int(reasons.size())});
  t.count.store(std::max(count, first + int(reasons.size())), std::memory_order_release);
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
