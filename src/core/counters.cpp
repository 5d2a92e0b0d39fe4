#include "core/counters.h"

namespace gpunfv {

uint64_t DropCounts::total() const {
  uint64_t t = 0;
  for (uint64_t v : by_reason) t += v;
  return t;
}

}  // namespace gpunfv
