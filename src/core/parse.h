// Packet parsing for both backends: Ethernet, up to two 802.1Q/802.1ad tags, IPv4 (with
// options), IPv6 (with extension headers), TCP, UDP, ICMP. Every read is bounds-checked against
// the frame length first, so a malformed or truncated frame yields a drop reason, never a read
// past its end.
#pragma once

#include <cstdint>

#include "core/compat.h"
#include "core/drop_reason.h"
#include "core/iso_span.h"
#include "core/packet_headers.h"

namespace gpunfv {

// Big-endian fields, each checked once as a whole (IsoSpan::framework_run).
GPUNFV_HD GPUNFV_FORCEINLINE uint16_t load_be16(IsoSpan<const uint8_t> f, uint32_t off) {
  const uint8_t* p = f.framework_run<2>(off);
  return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
GPUNFV_HD GPUNFV_FORCEINLINE uint32_t load_be32(IsoSpan<const uint8_t> f, uint32_t off) {
  const uint8_t* p = f.framework_run<4>(off);
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}
GPUNFV_HD GPUNFV_FORCEINLINE void store_be16(IsoSpan<uint8_t> f, uint32_t off, uint16_t v) {
  uint8_t* p = f.framework_run<2>(off);
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

namespace detail {
// Checks the L4 header at `off` against `end` (end of the IP payload within the frame).
GPUNFV_HD inline DropReason check_l4(IsoSpan<const uint8_t> f, uint32_t off, uint32_t end,
                                     uint8_t proto) {
  switch (proto) {
    case kProtoTcp: {
      if (off + 20 > end) return DropReason::truncated_l4;
      uint32_t doff = (f[off + 12] >> 4) * 4u;
      if (doff < 20 || off + doff > end) return DropReason::bad_tcp_offset;
      return DropReason::none;
    }
    case kProtoUdp:
    case kProtoIcmp:
    case kProtoIcmpV6:
      return off + 8 > end ? DropReason::truncated_l4 : DropReason::none;
    default:
      return DropReason::none;
  }
}
}  // namespace detail

// Parses `frame` (exactly the frame's bytes). Fills `h` and returns DropReason::none, or
// returns the reason the frame is malformed.
GPUNFV_HD inline DropReason parse_headers(IsoSpan<const uint8_t> frame, PacketHeaders& h) {
  h = PacketHeaders{};
  const uint32_t len = static_cast<uint32_t>(frame.size());
  if (len < 14) return DropReason::truncated_l2;
  uint32_t off = 12;
  uint16_t ethertype = load_be16(frame, off);
  for (int tags = 0; tags < 2 && (ethertype == kEtherTypeVlan || ethertype == kEtherTypeQinQ);
       ++tags) {
    if (off + 6 > len) return DropReason::truncated_l2;
    off += 4;
    ethertype = load_be16(frame, off);
  }
  off += 2;  // first byte after the EtherType
  h.l3_off = static_cast<uint8_t>(off);

  if (ethertype == kEtherTypeIpv4) {
    if (off + 20 > len) return DropReason::truncated_l3;
    if ((frame[off] >> 4) != 4) return DropReason::bad_ip_version;
    uint32_t ihl = (frame[off] & 0x0F) * 4u;
    if (ihl < 20) return DropReason::bad_ipv4_ihl;
    if (off + ihl > len) return DropReason::truncated_l3;
    uint32_t total = load_be16(frame, off + 2);
    if (total < ihl || off + total > len) return DropReason::bad_ip_length;
    h.ip_version = 4;
    h.l4_proto = frame[off + 9];
    uint16_t frag_offset = load_be16(frame, off + 6) & 0x1FFF;
    if (frag_offset != 0) return DropReason::none;  // no L4 header in a later fragment
    uint32_t l4 = off + ihl;
    DropReason r = detail::check_l4(frame, l4, off + total, h.l4_proto);
    if (r != DropReason::none) return r;
    h.l4_off = static_cast<uint8_t>(l4);
    return DropReason::none;
  }
  if (ethertype == kEtherTypeIpv6) {
    if (off + 40 > len) return DropReason::truncated_l3;
    if ((frame[off] >> 4) != 6) return DropReason::bad_ip_version;
    uint32_t end = off + 40 + load_be16(frame, off + 4);
    if (end > len) return DropReason::bad_ip_length;
    h.ip_version = 6;
    uint8_t next = frame[off + 6];
    uint32_t l4 = off + 40;
    // Walk the extension headers we know (hop-by-hop, routing, fragment, destination options).
    for (int i = 0; i < 8; ++i) {
      bool is_ext = next == 0 || next == 43 || next == 44 || next == 60;
      if (!is_ext) break;
      if (l4 + 8 > end) return DropReason::truncated_l3;
      uint8_t following = frame[l4];
      if (next == 44) {
        bool later_fragment = (load_be16(frame, l4 + 2) & 0xFFF8) != 0;
        l4 += 8;
        if (later_fragment) {
          h.l4_proto = following;
          return DropReason::none;
        }
      } else {
        l4 += (frame[l4 + 1] + 1u) * 8u;
      }
      next = following;
    }
    if (l4 > end) return DropReason::truncated_l3;
    h.l4_proto = next;
    DropReason r = detail::check_l4(frame, l4, end, next);
    if (r != DropReason::none) return r;
    if (l4 <= 255) h.l4_off = static_cast<uint8_t>(l4);
    return DropReason::none;
  }
  return DropReason::none;  // not IP: valid, left for NFs to judge
}

// A 32-bit flow hash of the 5-tuple (addresses, protocol, ports), 0 for non-IP frames.
// Same value on both backends; used to spread flows and keep them in order.
GPUNFV_HD inline uint32_t mix32(uint32_t h, uint32_t v) {
  v *= 0xcc9e2d51u;
  v = (v << 15) | (v >> 17);
  v *= 0x1b873593u;
  h ^= v;
  h = (h << 13) | (h >> 19);
  return h * 5u + 0xe6546b64u;
}

GPUNFV_HD inline uint32_t flow_hash(IsoSpan<const uint8_t> f, const PacketHeaders& h) {
  if (h.ip_version == 0) return 0;
  uint32_t acc = 0x9747b28cu;
  uint32_t ip = h.l3_off;
  if (h.ip_version == 4) {
    acc = mix32(acc, load_be32(f, ip + 12));
    acc = mix32(acc, load_be32(f, ip + 16));
  } else {
    for (uint32_t w = 0; w < 8; ++w) acc = mix32(acc, load_be32(f, ip + 8 + 4 * w));
  }
  uint32_t ports = 0;
  if (h.l4_off != 0 && (h.l4_proto == kProtoTcp || h.l4_proto == kProtoUdp))
    ports = load_be32(f, h.l4_off);
  acc = mix32(acc, ports);
  acc = mix32(acc, h.l4_proto);
  acc ^= acc >> 16;
  acc *= 0x85ebca6bu;
  acc ^= acc >> 13;
  acc *= 0xc2b2ae35u;
  acc ^= acc >> 16;
  return acc;
}

}  // namespace gpunfv
