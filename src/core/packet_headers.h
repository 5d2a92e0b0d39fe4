// Header offsets found by parsing, kept per packet so NFs do not parse again.
#pragma once

#include <cstdint>

namespace gpunfv {

struct PacketHeaders {
  uint8_t l3_off = 0;      // offset of the IP header (after Ethernet and 802.1Q tags)
  uint8_t l4_off = 0;      // offset of the TCP/UDP/ICMP header; 0 when absent (non-first fragment)
  uint8_t ip_version = 0;  // 4, 6, or 0 for a non-IP frame
  uint8_t l4_proto = 0;    // IP protocol number (after IPv6 extension headers)
};

inline constexpr uint8_t kProtoIcmp = 1;
inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoUdp = 17;
inline constexpr uint8_t kProtoIcmpV6 = 58;
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;
inline constexpr uint16_t kEtherTypeQinQ = 0x88A8;

}  // namespace gpunfv
