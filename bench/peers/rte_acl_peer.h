// DPDK's rte_acl (DPDK 22.11: multi-bit tries over the rule fields, a different algorithm from
// our bit vectors) as the independent peer of the Firewall's classifier: a test checks that
// both find the same first matching rule for every header, and benchmarks may time it.
//
// Built only when CMake finds libdpdk, into gpunfv_dpdk_peers (see rte_lpm_peer.h). This header
// includes no DPDK header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "nf/firewall/five_tuple.h"
#include "peers/eal.h"

struct rte_acl_ctx;

namespace gpunfv {

class RteAclPeer {
 public:
  // Builds an rte_acl context for the IPv4 5-tuple (protocol as a bitmask field, addresses as
  // prefix fields, ports as range fields), one category, rule i with priority N - i, so the
  // first rule in order wins as in the Firewall. Initialises the EAL first. Throws DpdkError.
  explicit RteAclPeer(std::span<const FiveTupleRule> rules);
  ~RteAclPeer();
  RteAclPeer(const RteAclPeer&) = delete;
  RteAclPeer& operator=(const RteAclPeer&) = delete;

  // rule_index[i]: the index of the first rule matching tuples[i], kNoRule if none. Calls
  // rte_acl_classify in bursts of kBurst.
  void classify(const FiveTuple* tuples, uint32_t* rule_index, size_t n) const;

  static constexpr unsigned kBurst = 64;

  size_t rule_count() const { return rule_count_; }

 private:
  rte_acl_ctx* ctx_ = nullptr;
  size_t rule_count_ = 0;
};

}  // namespace gpunfv
