// The SA and the ESP tunnel-mode framing shared by the library peers of the IPsec NF
// (openssl_esp_peer, ipsec_mb_peer). Written apart from src/nf/ipsec on purpose: the peers
// check our bytes, so they must not reuse our code. The framing follows the same policy as
// src/nf/ipsec/esp.h: outer TOS and DF copied from the inner header, ID = low 16 bits of the
// sequence number, TTL 64; pad bytes 1, 2, 3 to a 4-byte boundary; next header 4.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpunfv::peers {

struct EspPeerSa {
  uint32_t spi = 0;
  std::array<uint8_t, 16> enc_key{};
  std::array<uint8_t, 4> nonce{};
  std::array<uint8_t, 20> auth_key{};
  uint32_t local = 0, remote = 0;  // host byte order
};

namespace esp_framing {

inline constexpr size_t kMaxGrowth = 53;  // outer IP 20, ESP 8, IV 8, pad <= 3, trailer 2, ICV 12
inline constexpr size_t kIcv = 12;

inline void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
inline void put32(uint8_t* p, uint32_t v) {
  put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v));
}
inline uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get32(const uint8_t* p) { return uint32_t(get16(p)) << 16 | get16(p + 2); }

// Where the parts of an outbound ESP packet lie, relative to the frame.
struct Outbound {
  size_t esp = 0;     // ESP header (SPI); the ICV covers [esp, icv)
  size_t ct = 0;      // first byte to encrypt
  size_t ct_len = 0;  // bytes to encrypt
  size_t icv = 0;     // where the 12 ICV bytes go
  size_t len = 0;     // new frame length; 0: not an IPv4 packet
};

// Lays out the ESP packet around the IPv4 packet at frame[l3_off...]: moves the inner packet,
// writes the trailer (plaintext), ESP header, IV and outer header. Encryption and ICV remain.
inline Outbound frame_outbound(uint8_t* frame, size_t len, size_t l3_off, const EspPeerSa& sa,
                               uint32_t seq, uint64_t iv) {
  Outbound o;
  if (len < l3_off + 20 || (frame[l3_off] >> 4) != 4) return o;
  uint8_t* ip = frame + l3_off;
  const size_t inner = get16(ip + 2);
  if (inner < 20 || l3_off + inner > len) return o;
  const size_t pad = (4 - (inner + 2) % 4) % 4;
  o.esp = l3_off + 20;
  o.ct = o.esp + 16;
  o.ct_len = inner + pad + 2;
  o.icv = o.ct + o.ct_len;
  o.len = o.icv + kIcv;
  const uint8_t tos = ip[1];
  const uint16_t df = get16(ip + 6) & 0x4000;
  uint8_t* ct = frame + o.ct;
  std::memmove(ct, ip, inner);
  for (size_t k = 0; k < pad; ++k) ct[inner + k] = uint8_t(k + 1);
  ct[inner + pad] = uint8_t(pad);
  ct[inner + pad + 1] = 4;
  uint8_t* esp = frame + o.esp;
  put32(esp, sa.spi);
  put32(esp + 4, seq);
  put32(esp + 8, uint32_t(iv >> 32));
  put32(esp + 12, uint32_t(iv));
  ip[0] = 0x45;
  ip[1] = tos;
  put16(ip + 2, uint16_t(o.len - l3_off));
  put16(ip + 4, uint16_t(seq));
  put16(ip + 6, df);
  ip[8] = 64;
  ip[9] = 50;
  put16(ip + 10, 0);
  put32(ip + 12, sa.local);
  put32(ip + 16, sa.remote);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += get16(ip + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  put16(ip + 10, uint16_t(~sum));
  return o;
}

// The RFC 3686 counter block of the first keystream block.
inline void counter_block(const EspPeerSa& sa, uint64_t iv, uint8_t out[16]) {
  std::memcpy(out, sa.nonce.data(), 4);
  put32(out + 4, uint32_t(iv >> 32));
  put32(out + 8, uint32_t(iv));
  put32(out + 12, 1);
}

}  // namespace esp_framing
}  // namespace gpunfv::peers
