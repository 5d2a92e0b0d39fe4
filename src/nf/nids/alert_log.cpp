#include "nf/nids/alert_log.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "core/parse.h"

namespace gpunfv {

namespace {

constexpr size_t kBufferBytes = 1 << 20;

std::string_view proto_name(uint8_t proto) {
  switch (proto) {
    case kProtoTcp: return "TCP";
    case kProtoUdp: return "UDP";
    case kProtoIcmp: return "ICMP";
    case kProtoIcmpV6: return "IPv6-ICMP";
    case 47: return "GRE";
    case 50: return "ESP";
    case 51: return "AH";
    case 132: return "SCTP";
    default: return {};
  }
}

std::string address(IsoSpan<const uint8_t> f, uint32_t off, int version) {
  uint8_t bytes[16];
  const int n = version == 4 ? 4 : 16;
  for (int i = 0; i < n; ++i) bytes[i] = f[off + i];
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(version == 4 ? AF_INET : AF_INET6, bytes, text, sizeof text);
  return text;
}

// Length of the UTF-8 sequence starting at s[i] if it is well formed, else 0.
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto c = uint8_t(s[i]);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((uint8_t(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = uint8_t(s[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(char(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else if (c < 0x80) {
      out.push_back(char(c));
    } else if (size_t n = utf8_sequence(s, i)) {
      out.append(s.substr(i, n));
      i += n - 1;
    } else {
      char esc[8];  // a stray byte: as the Latin-1 character it would be
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    }
  }
  out.push_back('"');
  return out;
}

std::string eve_timestamp(uint64_t ns) {
  const std::time_t secs = std::time_t(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06u+0000", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                unsigned(ns / 1000 % 1'000'000));
  return text;
}

std::string format_alert(const AlertEvent& e) {
  std::string line;
  line.reserve(320 + 2 * e.msg_json.size());
  line += "{\"timestamp\":\"" + eve_timestamp(e.wire_ns) + "\"";
  if (e.pcap_cnt) line += ",\"pcap_cnt\":" + std::to_string(*e.pcap_cnt);
  line += ",\"event_type\":\"alert\"";
  const PacketHeaders& h = e.headers;
  if (h.ip_version == 4 || h.ip_version == 6) {
    const uint32_t ip = h.l3_off;
    const uint32_t src = h.ip_version == 4 ? ip + 12 : ip + 8;
    const uint32_t dst = h.ip_version == 4 ? ip + 16 : ip + 24;
    const bool ports = h.l4_off != 0 && (h.l4_proto == kProtoTcp || h.l4_proto == kProtoUdp);
    line += ",\"src_ip\":\"" + address(e.frame, src, h.ip_version) + "\"";
    if (ports) line += ",\"src_port\":" + std::to_string(load_be16(e.frame, h.l4_off));
    line += ",\"dest_ip\":\"" + address(e.frame, dst, h.ip_version) + "\"";
    if (ports) line += ",\"dest_port\":" + std::to_string(load_be16(e.frame, h.l4_off + 2));
    std::string_view name = proto_name(h.l4_proto);
    line += ",\"proto\":\"" + (name.empty() ? std::to_string(h.l4_proto) : std::string(name)) + "\"";
    if (h.l4_off != 0 && (h.l4_proto == kProtoIcmp || h.l4_proto == kProtoIcmpV6)) {
      line += ",\"icmp_type\":" + std::to_string(e.frame[h.l4_off]);
      line += ",\"icmp_code\":" + std::to_string(e.frame[h.l4_off + 1]);
    }
  }
  const std::string sid = std::to_string(e.sid);
  line += ",\"sid\":" + sid + ",\"msg\":";
  line += e.msg_json;
  line += ",\"alert\":{\"action\":\"";
  line += e.blocked ? "blocked" : "allowed";
  line += "\",\"gid\":" + std::to_string(e.gid) + ",\"signature_id\":" + sid +
          ",\"rev\":" + std::to_string(e.rev) + ",\"signature\":";
  line += e.msg_json;
  line += "}}\n";
  return line;
}

AlertLog::AlertLog(const std::string& path) : path_(path) {
  errno = 0;
  file_ = std::fopen(path.c_str(), "w");
  if (!file_)
    throw std::runtime_error("cannot open alert log '" + path + "': " +
                             (errno ? std::strerror(errno) : "unknown error"));
  std::setvbuf(file_, nullptr, _IOFBF, kBufferBytes);
}

AlertLog::~AlertLog() {
  if (file_) std::fclose(file_);
}

void AlertLog::write(const AlertEvent& e) {
  const std::string line = format_alert(e);
  std::fwrite(line.data(), 1, line.size(), file_);
  ++lines_;
}

void AlertLog::flush() { std::fflush(file_); }

}  // namespace gpunfv
