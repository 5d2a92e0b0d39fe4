#include "core/counters.h"

namespace gpunfv {

uint64_t DropCounts::total() const {
  uint64_t t = 0;
  for (uint64_t v : by_reason) t += v;
  return t;
}

DropCounts DropCounts::load_relaxed() const {
  DropCounts d;
  for (size_t r = 0; r < by_reason.size(); ++r) d.by_reason[r] = gpunfv::load_relaxed(by_reason[r]);
  return d;
}

}  // namespace gpunfv
