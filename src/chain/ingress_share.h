// Which of a chain's rx threads polls which of its port's rx queues.
//
// Without adapting (the default), thread t of T polls queues t, t + T, ... for the whole run.
// With settings.ingress_adapt, the queues are spread over as few threads as keep up with the
// rate: queue q goes to thread q % A, A the threads active now. Each thread closes its own
// batches, by size or by the batching deadline, so under partial load T threads send the stage
// T times the batches one would, each smaller; every batch costs the stage its calls, and past
// what the stage takes per second they wait in its queue. Fewer threads mean fewer, fuller
// batches and that wait gone, as long as the active threads keep up.
//
// A queue moves only at its thread's batch boundary (its batch submitted and numbered), and
// the next thread takes it at its own next boundary, so a flow's frames (one queue) still reach
// batches in batch order. Every window (kWindowNs) a thread at its boundary looks at the active
// threads' polls since the last look: a poll that brought a burst's worth of frames or more
// (kFullPoll) means the queue had filled while the thread was busy elsewhere. One more thread
// is woken when an active thread's full polls exceed kGrowAbove of its polls or a queue
// dropped frames; the count it reaches is then a floor for kFloorWindows windows, so a load
// that needs it does not lose frames again each time it is let go. When every active thread's
// full polls stay below kShrinkBelow and the count has not changed for kSettle windows, half
// of the threads are let go (one stays, the floor holds). All threads start active: a chain
// starting at full load loses nothing while they come down.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpunfv {

class IngressShare {
 public:
  static constexpr uint32_t kFullPoll = 32;      // frames: a burst's worth
  static constexpr double kGrowAbove = 0.5;
  static constexpr double kShrinkBelow = 0.05;
  static constexpr uint32_t kFloorWindows = 2000;
  static constexpr uint32_t kSettle = 5;         // windows
  static constexpr uint64_t kWindowNs = 1'000'000;

  // `threads` rx threads over `queues` rx queues (at least one each).
  IngressShare(uint16_t threads, uint16_t queues, bool adapt);

  // At thread t's batch boundary: gives away the queues it no longer polls and fills `out`
  // with those it polls now (none: the thread is idle).
  void queues_of(uint16_t t, std::vector<uint16_t>& out);
  // Thread t's polls since it last noted them: all, and those that brought kFullPoll frames or
  // more; `dropped`: a queue of its own lost frames.
  void note_polls(uint16_t t, uint64_t polls, uint64_t full, bool dropped);
  // Called by any thread at its boundary; acts at most once per window.
  void adjust(uint64_t now_ns);

  uint16_t active() const { return active_.load(std::memory_order_relaxed); }
  uint16_t threads() const { return threads_; }
  // Threads woken and let go over the run (the report).
  uint64_t grown() const { return grown_.load(); }
  uint64_t shrunk() const { return shrunk_.load(); }

 private:
  uint16_t wanted(uint16_t q, uint16_t active) const { return uint16_t(q % active); }

  struct Polls {
    std::atomic<uint64_t> polls{0}, full{0};
    std::atomic<bool> dropped{false};
  };
  uint16_t threads_;
  bool adapt_;
  std::atomic<uint16_t> active_;
  std::unique_ptr<std::atomic<uint16_t>[]> owner_;  // by queue: the thread polling it
  uint16_t queues_;
  std::unique_ptr<Polls[]> polls_;                 // by thread
  std::mutex adjust_m_;
  uint64_t window_start_ = 0;
  uint32_t since_change_ = 0;
  uint16_t floor_ = 1;        // the count the last wake reached
  uint32_t floor_left_ = 0;   // windows it still holds
  std::atomic<uint64_t> grown_{0}, shrunk_{0};
};

}  // namespace gpunfv
