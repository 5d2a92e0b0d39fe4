// OpenSSL (EVP AES-128-CTR + EVP_MAC HMAC-SHA1) as the library peer of the IPsec NF's own
// crypto: the same ESP tunnel-mode transform per packet (RFC 4303/3686/2404), the same outer
// header policy as src/nf/ipsec/esp.h (TOS and DF copied, ID = low 16 bits of the sequence
// number, TTL 64), so for the same SA, sequence number and IV the bytes must be equal. A test
// checks that; the IPsec benchmark times both.
//
// Built only where CMake finds OpenSSL (cmake/ipsec.cmake defines GPUNFV_HAVE_OPENSSL=1 for the
// targets it attaches this file to). bench/peers/*.cpp is also globbed into the DPDK peers
// library, which does not define it: there this file compiles to nothing.
#pragma once

#if GPUNFV_HAVE_OPENSSL

#include <openssl/types.h>

#include <cstddef>
#include <cstdint>

#include "peers/esp_peer_sa.h"

namespace gpunfv::peers {

class OpenSslEspPeer {
 public:
  static constexpr size_t kMaxGrowth = esp_framing::kMaxGrowth;

  explicit OpenSslEspPeer(const EspPeerSa& sa);  // throws std::runtime_error
  ~OpenSslEspPeer();
  OpenSslEspPeer(const OpenSslEspPeer&) = delete;
  OpenSslEspPeer& operator=(const OpenSslEspPeer&) = delete;

  // Encapsulates the IPv4 packet at frame[l3_off...] in place (the buffer has kMaxGrowth bytes
  // to spare). Returns the new frame length, 0 if the frame holds no IPv4 packet.
  size_t encapsulate(uint8_t* frame, size_t len, size_t l3_off, uint32_t seq, uint64_t iv);
  // Verifies and strips the ESP packet at frame[l3_off...] in place. Returns the new frame
  // length, 0 for a bad ICV or a malformed packet. No replay window (a stateless peer).
  size_t decapsulate(uint8_t* frame, size_t len, size_t l3_off);

 private:
  bool hmac(const uint8_t* data, size_t len, uint8_t out[20]);
  void ctr(uint8_t* data, size_t len, uint64_t iv);

  EspPeerSa sa_;
  EVP_CIPHER_CTX* cipher_ = nullptr;  // keyed once; the counter block is set per packet
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* mac_ctx_ = nullptr;  // keyed once; re-initialised per packet
};

}  // namespace gpunfv::peers

#endif  // GPUNFV_HAVE_OPENSSL
