#include "chain/chain_flow.h"

#include <algorithm>

namespace gpunfv {

namespace {

// Callers read the clock before taking the lock, so a thread can arrive with a time earlier
// than one another thread already recorded: such an interval counts as empty, never wraps.
uint64_t ns_between(uint64_t since, uint64_t now) { return now > since ? now - since : 0; }

}  // namespace

ChainFlow::ChainFlow(size_t stages, double threshold_packets, uint32_t queue_batches)
    : st_(stages), threshold_(threshold_packets), queue_batches_(queue_batches) {}

void ChainFlow::account_occupancy(Stage& st, uint64_t now_ns) {
  if (st.last_change_ns)
    st.m.queued_packet_seconds +=
        double(st.queued_packets) * double(ns_between(st.last_change_ns, now_ns)) * 1e-9;
  st.last_change_ns = std::max(st.last_change_ns, now_ns);
}

void ChainFlow::monitor(size_t s, uint64_t now_ns) {
  if (threshold_ <= 0 || s == 0) return;
  Stage& up = st_[s - 1];
  const bool congested = double(st_[s].queued_packets) > threshold_;
  if (congested == up.slowed) return;  // the same signal again changes nothing
  up.slowed = congested;
  if (congested) {
    up.slowed_since = now_ns;
    ++up.m.slow_down_signals;
  } else {
    up.m.slowed_ns += ns_between(up.slowed_since, now_ns);
  }
}

bool ChainFlow::push(size_t s, Batch* b, uint32_t packets, uint64_t now_ns) {
  std::lock_guard<std::mutex> lk(m_);
  Stage& st = st_[s];
  // NF queues are bounded; stage 0 (entering the chain) is bounded by the batch pool.
  if (queue_batches_ && s > 0 && packets > 0 && st.waiting.size() >= queue_batches_) {
    st.m.queue_full_drops += packets;
    return false;
  }
  account_occupancy(st, now_ns);
  if (st.waiting.emplace(b->batch_seq, std::make_pair(b, packets)).second)
    waiting_batches_.fetch_add(1, std::memory_order_relaxed);
  st.queued_packets += packets;
  st.m.max_queued_packets = std::max(st.m.max_queued_packets, st.queued_packets);
  monitor(s, now_ns);
  return true;
}

Batch* ChainFlow::pop(size_t s, uint64_t now_ns) {
  std::lock_guard<std::mutex> lk(m_);
  Stage& st = st_[s];
  if (st.slowed || st.waiting.empty()) return nullptr;
  auto it = st.waiting.begin();
  if (it->first != st.next_seq) return nullptr;  // an earlier batch is still upstream
  account_occupancy(st, now_ns);
  auto [b, packets] = it->second;
  st.waiting.erase(it);
  waiting_batches_.fetch_sub(1, std::memory_order_relaxed);
  ++st.next_seq;
  st.queued_packets -= packets;
  ++st.m.batches;
  st.m.packets += packets;
  monitor(s, now_ns);
  return b;
}

void ChainFlow::pass(size_t s, Batch* b, uint32_t packets, uint64_t now_ns) {
  std::lock_guard<std::mutex> lk(m_);
  Stage& st = st_[s];
  account_occupancy(st, now_ns);
  // Several threads issuing a chain's fused batches finish them in any order.
  st.next_seq = std::max(st.next_seq, b->batch_seq + 1);
  ++st.m.batches;
  st.m.packets += packets;
  if (packets) ++st.m.launches;
}

bool ChainFlow::ingress_paused() const {
  std::lock_guard<std::mutex> lk(m_);
  return st_[0].slowed;
}

bool ChainFlow::stage_slowed(size_t s) const {
  std::lock_guard<std::mutex> lk(m_);
  return st_[s].slowed;
}

void ChainFlow::count_launch(size_t s) {
  std::lock_guard<std::mutex> lk(m_);
  ++st_[s].m.launches;
}

void ChainFlow::add_busy(size_t s, uint64_t ns) {
  std::lock_guard<std::mutex> lk(m_);
  st_[s].m.busy_ns += ns;
}

uint64_t ChainFlow::queued_packets(size_t s) const {
  std::lock_guard<std::mutex> lk(m_);
  return st_[s].queued_packets;
}

bool ChainFlow::backlogged() const {
  return waiting_batches_.load(std::memory_order_relaxed) != 0 ||
         (issuers_ && issuing_.load(std::memory_order_relaxed) >= issuers_);
}

uint64_t ChainFlow::packets_seen(size_t s) const {
  std::lock_guard<std::mutex> lk(m_);
  return st_[s].m.packets;
}

std::vector<StageMetrics> ChainFlow::metrics(uint64_t now_ns) const {
  std::lock_guard<std::mutex> lk(m_);
  std::vector<StageMetrics> out;
  for (const Stage& st : st_) {
    StageMetrics m = st.m;
    if (st.slowed) m.slowed_ns += ns_between(st.slowed_since, now_ns);
    if (st.last_change_ns)
      m.queued_packet_seconds +=
          double(st.queued_packets) * double(ns_between(st.last_change_ns, now_ns)) * 1e-9;
    out.push_back(m);
  }
  return out;
}

std::string ChainFlow::state() const {
  std::lock_guard<std::mutex> lk(m_);
  std::string out;
  for (size_t s = 0; s < st_.size(); ++s) {
    const Stage& st = st_[s];
    out += "stage " + std::to_string(s) + ": next " + std::to_string(st.next_seq) + ", waiting";
    size_t shown = 0;
    for (const auto& [seq, bp] : st.waiting) {
      if (shown++ == 6) {
        out += " ...";
        break;
      }
      out += " " + std::to_string(seq);
    }
    out += " (" + std::to_string(st.waiting.size()) + " batches, " +
           std::to_string(st.queued_packets) + " packets)" + (st.slowed ? " slowed" : "") + "\n";
  }
  return out;
}

}  // namespace gpunfv
