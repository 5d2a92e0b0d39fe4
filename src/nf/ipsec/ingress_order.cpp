#include "nf/ipsec/ingress_order.h"

#include <cstdio>

namespace gpunfv::esp {

void IngressOrder::run(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position,
                       const std::function<void()>& step) {
  std::unique_lock<std::mutex> lock(m_);
  if (begin >= end) {
    step();
    return;
  }
  const uint64_t first = b.seq[begin];
  const uint64_t last = b.seq[end - 1];
  const bool ordered = last >= first && last - first == uint64_t(end - 1 - begin);
  uint64_t& next = next_.try_emplace((uint32_t(b.port[begin]) << 8) | position, mid_run_ ? first : 0)
                       .first->second;
  if (ordered && first > next) {
    bool due = cv_.wait_for(lock, kMaxWait, [&] { return first <= next; });
    if (!due && !warned_) {
      warned_ = true;
      std::fprintf(stderr,
                   "gpunfv: %s: waited %lld s for packets before #%llu of port %u; going on out "
                   "of ingress order\n",
                   owner_.c_str(), static_cast<long long>(kMaxWait.count()),
                   static_cast<unsigned long long>(first), unsigned(b.port[begin]));
    }
  }
  step();
  if (ordered && last + 1 > next) next = last + 1;
  cv_.notify_all();
}

void IngressOrder::resume_mid_run() {
  std::lock_guard<std::mutex> lock(m_);
  mid_run_ = true;
}

}  // namespace gpunfv::esp
