// DPDK's rte_lpm (DPDK 22.11, the DIR-24-8 table of Gupta, Lin and McKeown that our Dir24_8
// follows) as the independent peer of the Router's LPM table: nf_bench times it next to
// ours over the same destination addresses, and a test checks that both agree on every lookup.
//
// Built only when CMake finds libdpdk (GPUNFV_HAVE_DPDK=1), into gpunfv_dpdk_peers, which only
// nf_bench and gpunfv_tests link: gpunfv_lib and the gpunfv binary stay free of DPDK. This
// header includes no DPDK header, so its users need none of DPDK's compile flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "nf/router/lpm_dir24_8.h"
#include "peers/eal.h"

struct rte_lpm;

namespace gpunfv {


class RteLpmPeer {
 public:
  // rte_lpm's raw lookup result (what rte_lpm_lookup_bulk writes): this bit set when a route
  // matched, next hop in the low 24 bits (the bits above are rte_lpm's internal flags).
  static constexpr uint32_t kFound = 0x01000000;  // RTE_LPM_LOOKUP_SUCCESS
  static constexpr uint32_t kNextHopMask = 0x00FFFFFF;

  // Builds an rte_lpm holding `routes`, with the same semantics as Dir24_8: longest prefix
  // wins; for a prefix listed twice the later route wins. rte_lpm has no /0 (depth 0 is
  // invalid), so a default route is added as its two /1 halves, before every other route (a
  // real /1 then overrides its half). Initialises the EAL first. Throws DpdkError, or
  // std::invalid_argument for a next hop above lpm::kMaxNextHop.
  explicit RteLpmPeer(std::span<const Route> routes);
  // The same with room for `max_rules` rules and `tbl8_groups` groups, for add() and remove().
  RteLpmPeer(std::span<const Route> routes, uint32_t max_rules, uint32_t tbl8_groups);
  // rte_lpm_add / rte_lpm_delete (prefix lengths 1 to 32). Throw DpdkError.
  void add(const Route& r);
  void remove(const Ipv4Prefix& p);
  ~RteLpmPeer();
  RteLpmPeer(const RteLpmPeer&) = delete;
  RteLpmPeer& operator=(const RteLpmPeer&) = delete;

  // Looks up `n` host-order addresses: found[i], and next_hops[i] when found (0 otherwise).
  void lookup_bulk(const uint32_t* addrs, uint32_t* next_hops, bool* found, size_t n) const;
  // rte_lpm_lookup_bulk itself, in bursts of kBurst: out[i] is rte_lpm's raw result (kFound,
  // kNextHopMask). This is what nf_bench times.
  void lookup_bulk_raw(const uint32_t* addrs, uint32_t* out, size_t n) const;

  // rte_lpm_lookupx4 (DPDK's vector lookup of four addresses, what l3fwd's LPM mode uses) over
  // `n` addresses, four at a time (rte_lpm_lookup for the last n % 4): hops[i] is the next hop,
  // or kX4Miss where no route matched.
  void lookupx4(const uint32_t* addrs, uint32_t* hops, size_t n) const;
  static constexpr uint32_t kX4Miss = 0xFFFFFFFFu;  // above any next hop (24 bits)

  // rte_lpm_lookup_bulk keeps a variable-length array of n entries on the stack; calls are cut
  // into bursts of this many addresses (DPDK applications look up one rx burst at a time).
  static constexpr unsigned kBurst = 256;

  size_t route_count() const { return route_count_; }
  uint32_t tbl8_groups() const { return tbl8_groups_; }

 private:
  rte_lpm* lpm_ = nullptr;
  size_t route_count_ = 0;
  uint32_t tbl8_groups_ = 0;
};

}  // namespace gpunfv
