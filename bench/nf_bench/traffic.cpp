// Shared helpers of nf_bench's cases: checksums of rewritten frames, the case dispatcher.
#include <stdexcept>

#include "nf_case.h"
#include "core/packet_headers.h"

namespace gpunfv::bench {

namespace {

uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }

uint32_t sum16(const uint8_t* p, uint32_t n, uint32_t sum = 0) {
  for (uint32_t i = 0; i + 1 < n; i += 2) sum += get16(p + i);
  if (n & 1) sum += uint32_t(p[n - 1]) << 8;
  return sum;
}

uint16_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return uint16_t(sum);
}

}  // namespace

void refresh_checksums(uint8_t* f, uint32_t len) {
  constexpr uint32_t ip = 14;
  if (len < ip + 20 || (f[ip] >> 4) != 4) return;
  const uint32_t ihl = (f[ip] & 0x0Fu) * 4u, total = get16(f + ip + 2);
  if (ihl < 20 || total < ihl || ip + total > len) return;
  put16(f + ip + 10, 0);
  put16(f + ip + 10, uint16_t(~fold(sum16(f + ip, ihl))));
  const uint8_t proto = f[ip + 9];
  const uint32_t l4 = ip + ihl, l4_len = total - ihl;
  uint32_t at;
  if (proto == kProtoUdp && l4_len >= 8)
    at = 6;
  else if (proto == kProtoTcp && l4_len >= 20)
    at = 16;
  else
    return;
  put16(f + l4 + at, 0);
  uint32_t sum = sum16(f + ip + 12, 8) + proto + l4_len;  // pseudo-header
  uint16_t c = uint16_t(~fold(sum16(f + l4, l4_len, sum)));
  if (proto == kProtoUdp && c == 0) c = 0xFFFF;  // 0 would mean "no checksum"
  put16(f + l4 + at, c);
}

std::string peer_missing(const std::string& what, const std::string& package) {
  return "peer rows skipped: this build has no " + what + " (install " + package +
         " and reconfigure)";
}

NfCase make_case(RuntimeConfig& rc, const CaseOptions& o) {
  if (rc.chains[0].path.empty()) throw std::runtime_error(rc.file + ": the chain has no NF");
  const std::string type(rc.nfs[rc.chains[0].path[0]]->type());
  if (type == "router") return make_router_case(rc, o);
  if (type == "firewall") return make_firewall_case(rc, o);
  if (type == "nids") return make_nids_case(rc, o);
  if (type == "ipsec") return make_ipsec_case(rc, o);
  throw std::runtime_error(rc.file + ": nf_bench has no case for NF type '" + type + "'");
}

}  // namespace gpunfv::bench
