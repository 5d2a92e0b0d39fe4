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

  // rte_acl_classify itself over `n` inputs in one call (one category): each input points at
  // an IPv4 packet's protocol byte (header length 20, TCP or UDP: the ports follow the header),
  // or at kInputBytes written by input_of(). results[i]: the first matching rule's index + 1,
  // 0 when none.
  void classify_raw(const uint8_t* const* inputs, uint32_t* results, size_t n) const;
  static constexpr size_t kInputBytes = 15;  // protocol byte to the destination port's end
  static void input_of(const FiveTuple& t, uint8_t* out);

  size_t rule_count() const { return rule_count_; }
  // The classify method set on the context: the widest the CPU and EAL allow ("AVX512X32",
  // "AVX2", ...; "default" for an empty rule set).
  const char* method() const { return method_; }

 private:
  rte_acl_ctx* ctx_ = nullptr;
  const char* method_ = "default";
  size_t rule_count_ = 0;
};

}  // namespace gpunfv
