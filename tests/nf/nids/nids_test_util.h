// Helpers for the NIDS tests: the bundled traces' payloads, ET rule files, and frames built by
// hand.
#pragma once

#include <pcap/pcap.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/parse.h"
#include "nf/nids/nids.h"
#include "nf/nids/nids_logic.h"
#include "tests/fixtures/frame_batch.h"
#include "tests/fixtures/frames.h"

namespace gpunfv::nids_testing {

inline const std::string kEtDir = GPUNFV_SOURCE_DIR "/data/nids/et_open_2024-04-21";
inline const std::string kTraceDir = GPUNFV_SOURCE_DIR "/data/traces";

inline std::string et(const std::string& name) { return kEtDir + "/emerging-" + name + ".rules.gz"; }

inline std::vector<std::string> all_et_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kEtDir))
    if (e.path().string().ends_with(".rules.gz")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every capture in data/traces, sorted.
inline std::vector<std::string> trace_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kTraceDir)) {
    std::string p = e.path().string();
    if (p.ends_with(".pcap") || p.ends_with(".cap") || p.ends_with(".pcapng")) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The frames of a capture.
inline std::vector<std::vector<uint8_t>> read_frames(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* pcap = pcap_open_offline(path.c_str(), err);
  if (!pcap) throw std::runtime_error(path + ": " + err);
  std::vector<std::vector<uint8_t>> frames;
  pcap_pkthdr* hdr;
  const u_char* bytes;
  while (pcap_next_ex(pcap, &hdr, &bytes) == 1) frames.emplace_back(bytes, bytes + hdr->caplen);
  pcap_close(pcap);
  return frames;
}

// The NIDS payload of a frame (empty for frames the parser drops).
inline std::vector<uint8_t> payload_of(const std::vector<uint8_t>& frame) {
  IsoSpan<const uint8_t> f(frame.data(), frame.size());
  PacketHeaders h;
  if (parse_headers(f, h) != DropReason::none) return {};
  PayloadRange pr = nids_payload(f, h);
  return std::vector<uint8_t>(frame.begin() + pr.offset, frame.begin() + pr.offset + pr.length);
}

// Ethernet + IPv4 + TCP (20-byte header plus `tcp_options` bytes) + payload, then `padding`
// zero bytes after the IP packet (Ethernet padding).
inline std::vector<uint8_t> tcp_frame(const std::string& payload, uint32_t tcp_options = 0,
                                      uint32_t padding = 0, uint16_t sport = 1234,
                                      uint16_t dport = 80) {
  const uint32_t tcp_len = 20 + tcp_options, ip_len = 20 + tcp_len + uint32_t(payload.size());
  std::vector<uint8_t> f(14 + ip_len + padding, 0);
  f[12] = 0x08;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[2] = uint8_t(ip_len >> 8);
  ip[3] = uint8_t(ip_len);
  ip[8] = 64;
  ip[9] = kProtoTcp;
  const uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {192, 168, 1, 2};
  std::memcpy(ip + 12, src, 4);
  std::memcpy(ip + 16, dst, 4);
  uint8_t* tcp = ip + 20;
  tcp[0] = uint8_t(sport >> 8);
  tcp[1] = uint8_t(sport);
  tcp[2] = uint8_t(dport >> 8);
  tcp[3] = uint8_t(dport);
  tcp[12] = uint8_t((tcp_len / 4) << 4);
  std::memcpy(tcp + tcp_len, payload.data(), payload.size());
  return f;
}

// Ethernet + IPv4 + UDP/ICMP (8-byte header) + payload.
inline std::vector<uint8_t> l4_8byte_frame(uint8_t proto, const std::string& payload) {
  const uint32_t ip_len = 20 + 8 + uint32_t(payload.size());
  std::vector<uint8_t> f(14 + ip_len, 0);
  f[12] = 0x08;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[2] = uint8_t(ip_len >> 8);
  ip[3] = uint8_t(ip_len);
  ip[8] = 64;
  ip[9] = proto;
  ip[12] = 10;
  ip[15] = 1;
  ip[16] = 10;
  ip[19] = 2;
  std::memcpy(ip + 28, payload.data(), payload.size());
  return f;
}

using fixtures::arp_frame;  // an ARP frame (not IP), 60 bytes

// Runs `nids` over `frames` on the CPU (slots of 2048 bytes, the NIDS's results record);
// returns the batch for inspection.
inline std::unique_ptr<Batch> run_cpu(const Nids& nids, const std::vector<std::vector<uint8_t>>& frames) {
  auto b = std::make_unique<Batch>(uint32_t(frames.size()), 2048, MemoryKind::host, kNidsResultBytes);
  fixtures::fill_frames(*b, frames);
  nids.process(b->view(), 0, b->count(), 0);
  return b;
}

inline NidsResult result_of(const Batch& b, uint32_t i) {
  return NidsResult::load(b.view().results.framework_data() + size_t(i) * b.result_stride());
}

}  // namespace gpunfv::nids_testing
