// intel-ipsec-mb (the multi-buffer library DPDK's crypto PMDs use) as the second library peer of
// the IPsec NF: the same ESP tunnel-mode transform as openssl_esp_peer.h, with one chained job
// per packet (AES-128-CTR then HMAC-SHA1-96), through the library's job API with many jobs in
// flight: every job is submitted as soon as it is filled, completed jobs are taken as the
// manager returns them, and the manager is flushed once at the end of a call (a batch), so the
// library keeps its SIMD lanes full, which is how it is meant to be used. One manager serves
// any number of SAs (each job carries its SA's keys). (The burst API, IMB_SUBMIT_BURST, gave
// frames differing from ours in the last jobs of some calls with version 1.3 and this chained
// job: not used.)
//
// Built only where CMake finds libIPSec_MB (cmake/ipsec.cmake defines GPUNFV_HAVE_IPSEC_MB=1);
// elsewhere (e.g. in the DPDK peers library, which globs bench/peers/*.cpp) it compiles to
// nothing.
#pragma once

#if GPUNFV_HAVE_IPSEC_MB

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "peers/esp_peer_sa.h"

namespace gpunfv::peers {

class IpsecMbEspPeer {
 public:
  struct Packet {
    uint8_t* frame;  // with OpenSslEspPeer::kMaxGrowth bytes to spare
    size_t len;      // in: frame length; out: the ESP frame's length (0: not IPv4)
    size_t l3_off;
    uint32_t seq;
    uint64_t iv;
    uint32_t sa = 0;  // index into the peer's SAs
  };

  explicit IpsecMbEspPeer(const EspPeerSa& sa);  // throws std::runtime_error
  explicit IpsecMbEspPeer(std::span<const EspPeerSa> sas);
  ~IpsecMbEspPeer();
  IpsecMbEspPeer(const IpsecMbEspPeer&) = delete;
  IpsecMbEspPeer& operator=(const IpsecMbEspPeer&) = delete;

  // Encapsulates every packet of the burst in place (framing per packet, crypto as jobs); a
  // packet whose job fails gets len 0.
  void encapsulate_burst(Packet* packets, size_t n);
  // The library's name for the code path it chose (SSE, AVX2, AVX512, ...).
  const char* arch() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpunfv::peers

#endif  // GPUNFV_HAVE_IPSEC_MB
