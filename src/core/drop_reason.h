// Drop reasons, as VPP's error counters: every packet that is not transmitted ends in exactly
// one reason, and each reason has its own counter. A reason is a one-byte code in the packet's
// verdict. The framework's own reasons (parsing, ports, queues) are the fixed list below; each
// NF type declares its own in its folder (nf/nf_drops.h), and they take the codes after these
// when the NF type is first used.
#pragma once

#include <cstdint>
#include <span>
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
  X(not_ipv4, "not an IPv4 packet, at an NF that handles IPv4 only")                  \
  X(no_egress, "chain chose no egress port")                                          \
  X(port_tx_error, "port failed to transmit")                                         \
  X(nf_queue_full, "the NF's input queue was full (a loss inside the chain)")         \
  X(nf_isolation_fault, "the NF reached outside its memory, or was quarantined after it did") \
  X(nf_process_lost, "the NF's process was lost (killed or crashed) before it finished the packet") \
  X(ingress_backpressure, "the port's receive queue overflowed while backpressure paused it") \
  X(nic_rx_ring_full, "NIC found no free rx descriptor (gpuring port)")               \
  X(integrity_mismatch, "sampled checksum changed between rx and tx (forward)")

namespace gpunfv {

// A reason's code. The enumerators are the framework's reasons; an NF's reasons are codes from
// kFrameworkDropReasons on (nf/nf_drops.h gives them names in code).
enum class DropReason : uint8_t {
#define GPUNFV_X(id, desc) id,
  GPUNFV_DROP_REASONS(GPUNFV_X)
#undef GPUNFV_X
};

inline constexpr int kFrameworkDropReasons = 0
#define GPUNFV_X(id, desc) +1
    GPUNFV_DROP_REASONS(GPUNFV_X)
#undef GPUNFV_X
    ;

// Codes a run can hold: counters are arrays of this size.
inline constexpr int kMaxDropReasons = 64;

struct DropReasonDecl {
  const char* name;
  const char* description;
};

// Adds an NF type's reasons (`owner` names it in errors) and returns the code of the first;
// the others follow in order. The same owner with the same reasons again gets the same codes.
// The strings must live as long as the process (literals). Throws std::logic_error, adding
// none, if a name is already another's reason or the codes run out. Thread-safe.
uint8_t add_drop_reasons(std::string_view owner, std::span<const DropReasonDecl> reasons);

// Where codes come from in an NF process: the Manager's table (nf/nf_process/), so that a
// verdict byte means the same reason in both. The registrar returns the first code; the
// reasons are then named at it here too. Set once, before any NF type is used.
using DropReasonRegistrar = uint8_t (*)(std::string_view owner, std::span<const DropReasonDecl> reasons);
void set_drop_reason_registrar(DropReasonRegistrar registrar);

// Codes in use now (framework and every NF type used so far).
int drop_reason_count();

// "unknown" for a code no one declared.
std::string_view drop_reason_name(DropReason r);
std::string_view drop_reason_description(DropReason r);

}  // namespace gpunfv
