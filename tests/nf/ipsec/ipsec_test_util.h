// Helpers for the IPsec tests: hex, key-value vector files, frames, batches, SAs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/batch.h"
#include "nf/ipsec/ipsec.h"
#include "tests/fixtures/frame_batch.h"

namespace gpunfv::ipsec_test {

inline std::vector<uint8_t> hex(const std::string& s) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    out.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return out;
}

inline std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
  return s;
}

// A "name: value" file with records separated by blank lines (data/ipsec/*.txt).
inline std::vector<std::map<std::string, std::string>> read_records(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::map<std::string, std::string>> out;
  std::map<std::string, std::string> cur;
  std::string line;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '#') continue;
    auto colon = line.find(':');
    if (line.find_first_not_of(" \t\r") == std::string::npos || colon == std::string::npos) {
      flush();
      continue;
    }
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
    cur[line.substr(0, colon)] = value;
  }
  flush();
  return out;
}

struct FrameSpec {
  uint32_t src = 0xC0A80101, dst = 0xC0A80202;  // 192.168.1.1 -> 192.168.2.2
  uint16_t payload = 18;                        // UDP payload bytes
  uint8_t tos = 0;
  bool df = true;
  uint16_t id = 7;
  uint8_t fill = 0;         // payload byte seed
  uint16_t l2_trailer = 0;  // Ethernet padding after the IP packet
};

// Ethernet + IPv4 (valid checksum) + UDP (no checksum) + payload.
inline std::vector<uint8_t> udp_frame(const FrameSpec& s) {
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00};
  const uint16_t total = uint16_t(20 + 8 + s.payload);
  auto p16 = [&](uint16_t v) { f.push_back(uint8_t(v >> 8)), f.push_back(uint8_t(v)); };
  auto p32 = [&](uint32_t v) { p16(uint16_t(v >> 16)), p16(uint16_t(v)); };
  f.push_back(0x45);
  f.push_back(s.tos);
  p16(total);
  p16(s.id);
  p16(s.df ? 0x4000 : 0);
  f.push_back(64);
  f.push_back(17);
  p16(0);
  p32(s.src);
  p32(s.dst);
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += (f[14 + i] << 8) | f[15 + i];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  f[24] = uint8_t(~sum >> 8), f[25] = uint8_t(~sum);
  p16(5060), p16(5061), p16(uint16_t(8 + s.payload)), p16(0);
  for (uint16_t i = 0; i < s.payload; ++i) f.push_back(uint8_t(s.fill + i * 7));
  for (uint16_t i = 0; i < s.l2_trailer; ++i) f.push_back(0);
  return f;
}

// A host batch of `frames` as ingress leaves them (slots of `stride` bytes, a 16-byte results
// record per packet, ingress numbers from `first_seq`; tests/fixtures/frame_batch.h).
class EspBatch : public fixtures::FrameBatch {
 public:
  EspBatch(const std::vector<std::vector<uint8_t>>& frames, uint64_t first_seq = 0,
           uint32_t stride = 2048)
      : FrameBatch(frames, {.stride = stride, .result_bytes = 16, .first_seq = first_seq}) {}
};

// Runs `nf` (at chain position 0, results record at offset 0) over the whole batch.
inline void run(const NetworkFunction& nf, EspBatch& b) { nf.process(b.view(), 0, b.count(), 0); }

inline esp::SaConfig sa_config(uint32_t spi, uint8_t key_seed, const char* match = nullptr) {
  esp::SaConfig c;
  c.spi = spi;
  for (int i = 0; i < 16; ++i) c.enc_key[i] = uint8_t(key_seed + i);
  for (int i = 0; i < 4; ++i) c.nonce[i] = uint8_t(0xA0 + key_seed + i);
  for (int i = 0; i < 20; ++i) c.auth_key[i] = uint8_t(0x40 + key_seed * 3 + i);
  c.local = 0xC6336401;   // 198.51.100.1
  c.remote = 0xCB007101;  // 203.0.113.1
  if (match) c.match = parse_ipv4_prefix(match);
  return c;
}

}  // namespace gpunfv::ipsec_test
