// A small multi-producer multi-consumer queue of batch pointers. Batches move through it, not
// packets, so a mutex costs little per packet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace gpunfv {

template <typename T>
class BlockingQueue {
 public:
  void push(T v) {
    {
      std::lock_guard<std::mutex> lk(m_);
      q_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  // Waits up to `timeout`; nullopt on timeout or when closed and empty.
  std::optional<T> pop_for(std::chrono::microseconds timeout) {
    std::unique_lock<std::mutex> lk(m_);
    if (!cv_.wait_for(lk, timeout, [&] { return !q_.empty() || closed_; })) return std::nullopt;
    if (q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    return v;
  }
  std::optional<T> try_pop() {
    std::lock_guard<std::mutex> lk(m_);
    if (q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    return v;
  }
  void close() {
    {
      std::lock_guard<std::mutex> lk(m_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  bool closed_and_empty() {
    std::lock_guard<std::mutex> lk(m_);
    return closed_ && q_.empty();
  }
  size_t size() {
    std::lock_guard<std::mutex> lk(m_);
    return q_.size();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

}  // namespace gpunfv
