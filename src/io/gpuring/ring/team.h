// Team: the threads that run one ring pair's loop together. The leader (lane 0) runs the ring
// protocol (polls, queues, descriptors, counters: everything whose order matters) and shares
// what it found; the whole team shares the per-frame work that reads many bytes of the frame,
// so that work costs a few memory round trips whatever the frame's size, instead of one per
// byte read in turn. On the GPU the team is the block's warp (WarpTeam); a CPU thread is a
// team of one (SoloTeam), running the same loop source with the same results.
//
// Rules for loops written against a Team: protocol objects are used by the leader only (other
// lanes may construct them; constructors only read); every value a decision depends on goes
// through share(); team-wide calls (share, from, sum, max, leading, sync, and the helpers
// below built on them) are made by all lanes at the same point, never inside a leader-only
// branch.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/compat.h"
#include "io/forward/sampled_integrity.h"

namespace gpunfv::gpuring {

struct SoloTeam {
  GPUNFV_HD static constexpr uint32_t lane() { return 0; }
  GPUNFV_HD static constexpr uint32_t size() { return 1; }
  GPUNFV_HD static constexpr bool leader() { return true; }
  template <typename T>
  GPUNFV_HD T share(T v) const {
    return v;
  }
  GPUNFV_HD uint64_t sum(uint64_t v) const { return v; }
  // The sum over the lanes of each aligned group of `group` lanes (a power of two), to each.
  GPUNFV_HD uint64_t sum_in_groups(uint64_t v, uint32_t) const { return v; }
  GPUNFV_HD uint32_t max(uint32_t v) const { return v; }
  // How many lanes from lane 0 on, without a gap, have `yes`.
  GPUNFV_HD uint32_t leading(bool yes) const { return yes ? 1u : 0u; }
  // Lane `from`'s value, to every lane.
  template <typename T>
  GPUNFV_HD T from(uint32_t, T v) const {
    return v;
  }
  GPUNFV_HD void sync() const {}
};

#if defined(__CUDACC__)
// The 32 threads of a warp. Every lane must be active when team-wide calls are made.
struct WarpTeam {
  __device__ uint32_t lane() const { return threadIdx.x & 31u; }
  __device__ static constexpr uint32_t size() { return 32; }
  __device__ bool leader() const { return lane() == 0; }
  // The leader's value, to every lane.
  template <typename T>
  __device__ T share(T v) const {
    return from(0, v);
  }
  // Lane `src`'s value, to every lane (shuffled as 32-bit words).
  template <typename T>
  __device__ T from(uint32_t src, T v) const {
    static_assert(std::is_trivially_copyable_v<T>);
    constexpr unsigned kWords = (sizeof(T) + 3) / 4;
    uint32_t w[kWords] = {};
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (unsigned i = 0; i < kWords; ++i) w[i] = __shfl_sync(0xFFFFFFFFu, w[i], int(src));
    memcpy(&v, w, sizeof(T));
    return v;
  }
  __device__ uint32_t leading(bool yes) const {
    const uint32_t no = ~__ballot_sync(0xFFFFFFFFu, yes);
    return no == 0 ? 32u : uint32_t(__ffs(int(no)) - 1);
  }
  __device__ uint64_t sum(uint64_t v) const { return sum_in_groups(v, 32); }
  __device__ uint64_t sum_in_groups(uint64_t v, uint32_t group) const {
    for (uint32_t d = group / 2; d > 0; d >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, int(d));
    return v;
  }
  __device__ uint32_t max(uint32_t v) const {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
      const uint32_t o = __shfl_xor_sync(0xFFFFFFFFu, v, d);
      v = o > v ? o : v;
    }
    return v;
  }
  // Orders the leader's writes (a routed header, a test's tamper) before the lanes' reads.
  __device__ void sync() const { __syncwarp(); }
};
#endif

// Lanes per frame when a team takes the integrity sums of several frames at once, the longest
// `longest` bytes: enough lanes that each reads at most 4 blocks of it (16 samples, issued
// together), so short frames go many to a round and long ones get the lanes they need.
GPUNFV_HD inline uint32_t integrity_group(uint32_t team_size, uint32_t longest) {
  const uint32_t blocks = (longest + kIntegrityBlock - 1) / kIntegrityBlock;
  uint32_t g = 1;
  while (g < team_size && g * 4 < blocks) g *= 2;
  return g;
}

// The sums of several frames at once: the team in aligned groups of `group` lanes (a power of
// two), each group one frame (`frame`, `len`: the lane's group's frame; null for none). Every
// lane of a group gets its frame's sum.
template <typename Team>
GPUNFV_HD uint32_t team_sampled_integrity_grouped(const Team& team, uint32_t group, const uint8_t* frame,
                                                  uint32_t len) {
  IntegrityPartial mine;
  if (frame) mine = sampled_integrity_partial(frame, len, team.lane() % group, group);
  IntegrityPartial all;
  all.samples = team.sum_in_groups(mine.samples, group);
  all.weighted = team.sum_in_groups(mine.weighted, group);
  return sampled_integrity_combine(len, all);
}

// Runs fn(i, group) for frames 0..count-1 (count <= size(); lane i holds frame i's details) in
// rounds of size() / group frames, group = integrity_group of the longest `my_len`: in a round
// starting at frame `base`, lane l's group takes frame base + l / group. fn makes team-wide
// calls, so every lane calls it in every round (i >= count: its group has no frame). With
// `result`, lane i gets back fn's value from the group that took frame i. A team of one takes
// the frames one by one.
template <typename Team, typename Fn>
GPUNFV_HD void team_each_frame(const Team& team, uint32_t count, uint32_t my_len, Fn&& fn,
                               uint32_t* result = nullptr) {
  const uint32_t group = integrity_group(team.size(), team.max(my_len));
  const uint32_t per_round = team.size() / group;
  const uint32_t lane = team.lane();
  for (uint32_t base = 0; base < count; base += per_round) {
    const uint32_t r = static_cast<uint32_t>(fn(base + lane / group, group));
    if (result) {  // the same for every lane
      const bool mine_here = lane >= base && lane < base + per_round;
      const uint32_t v = team.from(mine_here ? (lane - base) * group : 0u, r);
      if (mine_here) *result = v;
    }
  }
}

// The sampled integrity sum of a frame (io/forward/sampled_integrity.h), taken by the team:
// each lane reads the samples of every size()-th 64-byte block. Every lane gets the sum.
template <typename Team>
GPUNFV_HD uint32_t team_sampled_integrity(const Team& team, const uint8_t* frame, uint32_t len) {
  const IntegrityPartial mine = sampled_integrity_partial(frame, len, team.lane(), team.size());
  IntegrityPartial all;
  all.samples = team.sum(mine.samples);
  all.weighted = team.sum(mine.weighted);
  return sampled_integrity_combine(len, all);
}

}  // namespace gpunfv::gpuring
