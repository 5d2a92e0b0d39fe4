// The NIDS alert log: one JSON object per line, shaped like Suricata's eve.json alert events so
// the tools that read those (jq filters, SIEM importers) read it too:
//
//   {"timestamp":"2004-05-13T10:17:08.222534+0000","pcap_cnt":4,"event_type":"alert",
//    "src_ip":"65.208.228.223","src_port":80,"dest_ip":"145.254.160.237","dest_port":3372,
//    "proto":"TCP","sid":2013028,"msg":"ET ...","alert":{"action":"allowed","gid":1,
//    "signature_id":2013028,"rev":7,"signature":"ET ..."}}
//
// timestamp is the packet's capture time in UTC; pcap_cnt (the packet's 1-based index in its
// capture, as Suricata counts) only for packets read from a pcap; ports only for TCP and UDP,
// icmp_type/icmp_code for ICMP. `sid` and `msg` repeat alert.signature_id and .signature at the
// top level for quick filters. Written through a large buffer, on the egress thread only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "core/iso_span.h"
#include "core/packet_headers.h"

namespace gpunfv {

// `s` as a JSON string literal, quotes included (control bytes and non-UTF-8 bytes escaped).
std::string json_quote(std::string_view s);

// "2004-05-13T10:17:08.222534+0000" for UNIX time `ns`.
std::string eve_timestamp(uint64_t ns);

struct AlertEvent {
  uint64_t wire_ns = 0;
  std::optional<uint64_t> pcap_cnt;
  IsoSpan<const uint8_t> frame;
  PacketHeaders headers;
  uint32_t gid = 1, sid = 0, rev = 0;
  std::string_view msg_json;  // the rule's msg, already json_quote()d
  bool blocked = false;       // action: drop
};

// One line (with its '\n') for `e`.
std::string format_alert(const AlertEvent& e);

class AlertLog {
 public:
  // Opens (truncates) `path`. Throws std::runtime_error naming the path.
  explicit AlertLog(const std::string& path);
  ~AlertLog();
  AlertLog(const AlertLog&) = delete;
  AlertLog& operator=(const AlertLog&) = delete;

  void write(const AlertEvent& e);
  void flush();
  const std::string& path() const { return path_; }
  uint64_t lines() const { return lines_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t lines_ = 0;
};

}  // namespace gpunfv
