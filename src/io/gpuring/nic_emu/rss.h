// The 82599's receive-side scaling as the NIC emulator plays it: a frame's queue (ring), its
// RSS hash and the packet/RSS type its rx write-back reports. IPv4 TCP/UDP: the Toeplitz hash
// over addresses and ports; other IPv4: over the addresses; anything else: queue 0 and no
// hash, as the 82599 does. Shared by the emulator and the benchmark's copy-engine peer, which
// does the emulator's per-frame work without a GPU side.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "core/parse.h"
#include "io/gpuring/ring/descriptors.h"
#include "io/gpuring/nic_emu/toeplitz.h"

namespace gpunfv::gpuring {

struct RssResult {
  uint32_t ring = 0;
  uint32_t hash = 0;
  uint16_t pkt_info = kRssTypeNone;
};

class Rss {
 public:
  explicit Rss(uint32_t rings) : reta_(rings) {}

  RssResult classify(const uint8_t* frame, uint32_t len) const {
    RssResult r;
    PacketHeaders h;
    if (parse_headers(IsoSpan<const uint8_t>(frame, len), h) != DropReason::none || h.ip_version != 4)
      return r;
    uint8_t tuple[12];
    std::memcpy(tuple, frame + h.l3_off + 12, 8);  // source and destination address
    size_t n = 8;
    r.pkt_info = kPtypeIpv4 | kRssTypeIpv4;
    if (h.l4_off != 0 && (h.l4_proto == kProtoTcp || h.l4_proto == kProtoUdp)) {
      std::memcpy(tuple + 8, frame + h.l4_off, 4);  // source and destination port
      n = 12;
      r.pkt_info = h.l4_proto == kProtoTcp ? (kPtypeIpv4 | kPtypeTcp | kRssTypeTcpIpv4)
                                           : (kPtypeIpv4 | kPtypeUdp | kRssTypeUdpIpv4);
    }
    r.hash = toeplitz_.hash(std::span<const uint8_t>(tuple, n));
    r.ring = reta_.ring_of(r.hash);
    return r;
  }

 private:
  RssTable reta_;
  ToeplitzTable toeplitz_;
};

}  // namespace gpunfv::gpuring
