// ThreadTeam: a team (src/io/gpuring/ring/team.h) of N CPU threads that answers the team calls as a
// warp does (share, from, sum, leading, sync: every lane calls each at the same point, and gets
// the same answer), so the loops' several-lane paths, which the GPU runs with a warp, run in CPU
// tests with real concurrency. A barrier stands for the warp's lockstep.
#pragma once

#include <algorithm>
#include <array>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace gpunfv::gpuring::test {

class ThreadTeamState {
 public:
  explicit ThreadTeamState(uint32_t lanes) : lanes_(lanes), barrier_(lanes), words_(lanes) {}
  uint32_t lanes() const { return lanes_; }
  void wait() { barrier_.arrive_and_wait(); }
  std::array<uint64_t, 4>& words(uint32_t lane) { return words_[lane]; }

 private:
  uint32_t lanes_;
  std::barrier<> barrier_;
  std::vector<std::array<uint64_t, 4>> words_;  // per lane: what it offers in the current call
};

class ThreadTeam {
 public:
  ThreadTeam(ThreadTeamState* state, uint32_t lane) : s_(state), lane_(lane) {}
  uint32_t lane() const { return lane_; }
  uint32_t size() const { return s_->lanes(); }
  bool leader() const { return lane_ == 0; }

  template <typename T>
  T from(uint32_t src, T v) const {
    static_assert(sizeof(T) <= sizeof(std::array<uint64_t, 4>));
    std::memcpy(s_->words(lane_).data(), &v, sizeof(T));
    s_->wait();  // every lane has offered its value
    T out;
    std::memcpy(&out, s_->words(src).data(), sizeof(T));
    s_->wait();  // every lane has read before any offers the next one
    return out;
  }
  template <typename T>
  T share(T v) const {
    return from(0, v);
  }
  uint64_t sum(uint64_t v) const {
    s_->words(lane_)[0] = v;
    s_->wait();
    uint64_t total = 0;
    for (uint32_t l = 0; l < size(); ++l) total += s_->words(l)[0];
    s_->wait();
    return total;
  }
  uint64_t sum_in_groups(uint64_t v, uint32_t group) const {
    s_->words(lane_)[0] = v;
    s_->wait();
    uint64_t total = 0;
    const uint32_t first = lane_ / group * group;
    for (uint32_t l = first; l < first + group; ++l) total += s_->words(l)[0];
    s_->wait();
    return total;
  }
  uint32_t max(uint32_t v) const {
    s_->words(lane_)[0] = v;
    s_->wait();
    uint64_t m = 0;
    for (uint32_t l = 0; l < size(); ++l) m = std::max<uint64_t>(m, s_->words(l)[0]);
    s_->wait();
    return static_cast<uint32_t>(m);
  }
  uint32_t leading(bool yes) const {
    s_->words(lane_)[0] = yes;
    s_->wait();
    uint32_t n = 0;
    while (n < size() && s_->words(n)[0]) ++n;
    s_->wait();
    return n;
  }
  void sync() const { s_->wait(); }

 private:
  ThreadTeamState* s_;
  uint32_t lane_;
};

// Runs body(team) on `lanes` threads, one team; join() waits for all.
class TeamThreads {
 public:
  TeamThreads(uint32_t lanes, std::function<void(const ThreadTeam&)> body) : state_(lanes) {
    for (uint32_t l = 0; l < lanes; ++l)
      threads_.emplace_back([this, l, body] { body(ThreadTeam(&state_, l)); });
  }
  ~TeamThreads() { join(); }
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  ThreadTeamState state_;
  std::vector<std::thread> threads_;
};

}  // namespace gpunfv::gpuring::test
