// Drop reasons, one X-macro list (as VPP's error counters): every packet that is not
// transmitted ends in exactly one of these, and each has its own counter.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/compat.h"

// X(identifier, "description")
#define GPUNFV_DROP_REASONS(X)                                                        \
  X(none, "not dropped")                                                              \
  X(truncated_l2, "frame shorter than its Ethernet/802.1Q header")                   \
  X(truncated_l3, "frame shorter than its IPv4/IPv6 header")                         \
  X(bad_ip_version, "IP version field disagrees with the EtherType")                 \
  X(bad_ipv4_ihl, "IPv4 header length below 20 bytes")                               \
  X(bad_ip_length, "IP total length below its header or beyond the frame")          \
  X(truncated_l4, "IP payload shorter than its TCP/UDP/ICMP header")                 \
  X(bad_tcp_offset, "TCP data offset below 20 bytes or beyond the IP payload")       \
  X(oversize, "frame longer than the batch slot")                                     \
  X(not_ipv4, "not an IPv4 packet (router)")                                          \
  X(ipv4_bad_checksum, "IPv4 header checksum does not verify (router)")             \
  X(no_route, "no route to the destination (router)")                                 \
  X(ttl_expired, "TTL reached zero (router)")                                         \
  X(no_egress, "chain chose no egress port")                                          \
  X(port_tx_error, "port failed to transmit")                                         \
  X(firewall_rule, "dropped by a firewall rule")                                      \
  X(firewall_default, "dropped by the firewall's default action")                     \
  X(nids_match, "dropped by a NIDS rule (action: drop)")                              \
  X(esp_bad_icv, "ESP integrity check value does not verify (ipsec inbound)")         \
  X(esp_replay, "ESP sequence number replayed or left of the window (ipsec inbound)") \
  X(esp_unknown_spi, "no SA with the packet's SPI (ipsec inbound)")                   \
  X(esp_malformed, "ESP packet too short, misaligned, fragmented or badly padded")   \
  X(ipsec_no_sa, "no SA applies to the packet (ipsec, bypass off)")                   \
  X(esp_seq_exhausted, "SA sent 2^32-1 packets, needs new keys (ipsec outbound)")     \
  X(nf_queue_full, "the NF's input queue was full (a loss inside the chain)")         \
  X(ingress_backpressure, "the port's receive queue overflowed while backpressure paused it") \
  X(nic_rx_ring_full, "NIC found no free rx descriptor (gpuring port)")               \
  X(integrity_mismatch, "sampled checksum changed between rx and tx (forward)")

namespace gpunfv {

enum class DropReason : uint8_t {
#define GPUNFV_X(id, desc) id,
  GPUNFV_DROP_REASONS(GPUNFV_X)
#undef GPUNFV_X
      count_
};

inline constexpr int kDropReasonCount = static_cast<int>(DropReason::count_);

inline constexpr std::string_view drop_reason_name(DropReason r) {
  switch (r) {
#define GPUNFV_X(id, desc) \
  case DropReason::id:     \
    return #id;
    GPUNFV_DROP_REASONS(GPUNFV_X)
#undef GPUNFV_X
    default:
      return "unknown";
  }
}

inline constexpr std::string_view drop_reason_description(DropReason r) {
  switch (r) {
#define GPUNFV_X(id, desc) \
  case DropReason::id:     \
    return desc;
    GPUNFV_DROP_REASONS(GPUNFV_X)
#undef GPUNFV_X
    default:
      return "unknown";
  }
}

}  // namespace gpunfv
