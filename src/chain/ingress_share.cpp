#include "chain/ingress_share.h"

#include <algorithm>

namespace gpunfv {

IngressShare::IngressShare(uint16_t threads, uint16_t queues, bool adapt)
    : threads_(std::max<uint16_t>(1, threads)),
      adapt_(adapt),
      active_(threads_),
      owner_(new std::atomic<uint16_t>[std::max<uint16_t>(1, queues)]),
      queues_(std::max<uint16_t>(1, queues)),
      polls_(new Polls[threads_]) {
  for (uint16_t q = 0; q < queues_; ++q) owner_[q].store(wanted(q, threads_));
}

void IngressShare::queues_of(uint16_t t, std::vector<uint16_t>& out) {
  out.clear();
  const uint16_t a = active();
  for (uint16_t q = 0; q < queues_; ++q) {
    if (owner_[q].load(std::memory_order_acquire) != t) continue;
    const uint16_t next = wanted(q, a);
    if (next != t) {
      owner_[q].store(next, std::memory_order_release);  // the next thread takes it at its boundary
      continue;
    }
    out.push_back(q);
  }
}

void IngressShare::note_polls(uint16_t t, uint64_t polls, uint64_t full, bool dropped) {
  if (!adapt_) return;
  Polls& p = polls_[t];
  if (polls) p.polls.fetch_add(polls, std::memory_order_relaxed);
  if (full) p.full.fetch_add(full, std::memory_order_relaxed);
  if (dropped) p.dropped.store(true, std::memory_order_relaxed);
}

void IngressShare::adjust(uint64_t now_ns) {
  if (!adapt_) return;
  std::unique_lock<std::mutex> lk(adjust_m_, std::try_to_lock);
  if (!lk.owns_lock()) return;
  if (window_start_ == 0) window_start_ = now_ns;
  if (now_ns - window_start_ < kWindowNs) return;
  window_start_ = now_ns;
  const uint16_t a = active();
  bool grow = false, shrink = a > 1;
  for (uint16_t t = 0; t < threads_; ++t) {
    const uint64_t polls = polls_[t].polls.exchange(0, std::memory_order_relaxed);
    const uint64_t full = polls_[t].full.exchange(0, std::memory_order_relaxed);
    const bool dropped = polls_[t].dropped.exchange(false, std::memory_order_relaxed);
    if (t >= a) continue;  // an idle thread's (or a queue it just gave away) say nothing
    const double share = polls ? double(full) / double(polls) : 0.0;
    if (dropped || share > kGrowAbove) grow = true;
    if (dropped || share >= kShrinkBelow) shrink = false;
  }
  ++since_change_;
  if (floor_left_ > 0 && --floor_left_ == 0) floor_ = 1;
  const uint16_t half = std::max<uint16_t>(floor_, uint16_t(a / 2));
  if (grow && a < threads_) {
    active_.store(uint16_t(a + 1), std::memory_order_relaxed);
    floor_ = uint16_t(a + 1);
    floor_left_ = kFloorWindows;
    since_change_ = 0;
    grown_.fetch_add(1);
  } else if (shrink && since_change_ >= kSettle && half < a) {
    active_.store(half, std::memory_order_relaxed);
    since_change_ = 0;
    shrunk_.fetch_add(1);
  }
}

}  // namespace gpunfv
