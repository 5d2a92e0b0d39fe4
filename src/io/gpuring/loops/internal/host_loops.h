// HostLoops: the one CPU runner of the ring loops (ring_loops.h, ring_batch_loops.h,
// forward_loops.h): a thread per loop over rings in host memory, each a team of one (SoloTeam:
// team.h), and how they end. The three families differ only in the loops they start
// (host_ring_runner.h, host_ring_batch_runner.h, host_forward_runner.h).
//
// Errors: std::system_error when a thread cannot be started (the ones started are then ended
// as on destruction).
#pragma once

#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace gpunfv::gpuring {

class HostLoops {
 public:
  // What destroying running loops does: drain (stop, then join: the loops end once the NIC has
  // delivered everything) or abort (nobody serves them any more, so a drain could wait for ever:
  // they exit as they stand).
  enum class OnDestroy { drain, abort };

  // `rings` is anything with request_stop() and request_abort() (RingSet, ForwardRings); it
  // must outlive the loops.
  template <typename Rings>
  HostLoops(Rings& rings, OnDestroy on_destroy)
      : stop_([&rings] { rings.request_stop(); }),
        abort_([&rings] { rings.request_abort(); }),
        on_destroy_(on_destroy) {}
  ~HostLoops() {
    if (running() && on_destroy_ == OnDestroy::abort)
      abort_();
    else if (running())
      stop_();
    join();
  }
  HostLoops(const HostLoops&) = delete;
  HostLoops& operator=(const HostLoops&) = delete;

  // Starts `loop` on a thread of its own.
  void spawn(std::function<void()> loop) { threads_.emplace_back(std::move(loop)); }
  // Call once the NIC has delivered its last frame: the loops drain and exit.
  void stop_and_join() {
    stop_();
    join();
  }
  // Waits for the loops to exit (they were stopped elsewhere, or end by themselves).
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  bool running() const {
    for (const auto& t : threads_)
      if (t.joinable()) return true;
    return false;
  }

  std::function<void()> stop_, abort_;
  OnDestroy on_destroy_;
  std::vector<std::thread> threads_;
};

}  // namespace gpunfv::gpuring
