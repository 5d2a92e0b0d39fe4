// Live tables replaced whole (a firewall's rule set, a NIDS automaton): the new tables are
// built beside the live ones, off the packet path, and published by swapping one pointer. A
// batch pins the tables once at its start and holds them while it is processed, so it sees one
// whole version; the version stays allocated while any batch holds it (shared ownership; the
// GPU side also waits for the streams that launched over it, see retire()).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "nf/table_versions.h"

namespace gpunfv {

template <typename T>
class LiveSnapshot {
 public:
  struct Pinned {
    std::shared_ptr<const T> tables;
    std::atomic<uint64_t>* packets = nullptr;
    uint64_t version = 0;
    const T& operator*() const { return *tables; }
    const T* operator->() const { return tables.get(); }
    void count(uint64_t n) const { packets->fetch_add(n, std::memory_order_relaxed); }
  };

  LiveSnapshot(std::shared_ptr<const T> first, uint64_t entries) {
    live_ = Pinned{std::move(first), log_.record(1, "start", entries).get(), 1};
  }

  Pinned pin() const {
    std::lock_guard<std::mutex> lk(m_);
    return live_;
  }

  // Publishes `next` as a new version and returns the previous one (tables, counter, number)
  // once no host thread holds it any more (device work that used it may still run: see the
  // caller's retire).
  Pinned publish(std::shared_ptr<const T> next, std::string change, uint64_t entries) {
    Pinned old;
    {
      std::lock_guard<std::mutex> lk(m_);
      const uint64_t v = live_.version + 1;
      // The log keeps the counter alive for the rest of the run.
      auto* counter = log_.record(v, std::move(change), entries).get();
      old = std::exchange(live_, Pinned{std::move(next), counter, v});
    }
    // Pins are short (one batch's processing on the host): wait for them to end.
    while (old.tables.use_count() > 1) std::this_thread::yield();
    return old;
  }

  uint64_t version() const {
    std::lock_guard<std::mutex> lk(m_);
    return live_.version;
  }
  const TableVersionLog& log() const { return log_; }

 private:
  mutable std::mutex m_;
  Pinned live_;
  TableVersionLog log_;
};

}  // namespace gpunfv
