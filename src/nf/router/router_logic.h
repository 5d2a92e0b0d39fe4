// The Router's per-packet logic, one source for both backends (RFC 1812 forwarding, reduced to
// what an IPv4 LPM router does to a packet): verify the header checksum, look the destination
// up, decrement the TTL with an incremental checksum update, choose the egress port.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/batch.h"
#include "core/compat.h"
#include "core/drop_reason.h"
#include "core/iso_span.h"
#include "core/internet_checksum.h"
#include "core/parse.h"
#include "nf/nf_drops.h"
#include "nf/router/lpm_dir24_8.h"

namespace gpunfv {

#define GPUNFV_ROUTER_DROPS(X)                                        \
  X(ipv4_bad_checksum, "IPv4 header checksum does not verify (router)") \
  X(no_route, "no route to the destination (router)")                   \
  X(ttl_expired, "TTL reached zero (router)")
GPUNFV_NF_DROP_REASONS(RouterDrop, "router", GPUNFV_ROUTER_DROPS);

// What the per-packet function reads: the LPM tables and the next-hop -> port id table.
struct RouterView {
  Dir24_8Ref lpm;
  IsoSpan<const uint16_t> next_hop_ports;
};
static_assert(iso_view<RouterView>, GPUNFV_ISO_VIEW_MESSAGE);


struct RouterLogic {
  using Drops = RouterDrop;
  GPUNFV_HD NfVerdict operator()(const RouterView& v, PacketRef p) const {
    const PacketHeaders& h = p.headers();
    if (h.ip_version != 4) return DropReason::not_ipv4;
    // parse_headers has checked that the whole IHL-long header lies within the frame.
    IsoSpan<uint8_t> f = p.frame();
    const uint32_t ip = h.l3_off;
    const uint32_t header_bytes = (f[ip] & 0x0Fu) * 4u;
    if (ipv4_checksum::ones_sum(f, ip, header_bytes) != 0xFFFF)
      return RouterDrop::ipv4_bad_checksum;

    LpmResult route = v.lpm.lookup(load_be32(f, ip + 16));
    if (!route.found) return RouterDrop::no_route;

    if (f[ip + 8] <= 1) return RouterDrop::ttl_expired;
    // TTL shares its 16-bit checksum word with the protocol byte (header offset 8).
    const uint16_t old_word = load_be16(f, ip + 8);
    const uint16_t new_word = static_cast<uint16_t>(old_word - 0x0100);
    store_be16(f, ip + 8, new_word);
    store_be16(f, ip + 10, ipv4_checksum::update(load_be16(f, ip + 10), old_word, new_word));

    p.set_egress_port(v.next_hop_ports[route.next_hop]);
    return DropReason::none;
  }
};

}  // namespace gpunfv
