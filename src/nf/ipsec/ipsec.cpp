#include "nf/ipsec/ipsec.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "nf/collect_scan.h"
#include "nf/ipsec/esp_order.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses `bytes` bytes of hex (optionally "0x"-prefixed). The error names the key and the
// expected length, never the text: a mistyped key is still a key.
template <size_t N>
void parse_hex_key(const ConfigNode& node, const char* key, const char* what, uint8_t* out) {
  std::string s = node[key].as_string();
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s = s.substr(2);
  bool ok = s.size() == 2 * N;
  for (size_t i = 0; ok && i < N; ++i) {
    int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0)
      ok = false;
    else
      out[i] = uint8_t(hi << 4 | lo);
  }
  std::fill(s.begin(), s.end(), '\0');
  if (!ok)
    node[key].fail(std::string(key) + ": expected " + std::to_string(2 * N) + " hex digits (" +
                   std::to_string(N) + " bytes: " + what + ")");
}

uint32_t parse_address(const ConfigNode& sa, const char* key) {
  ConfigNode n = sa[key];
  auto a = parse_ipv4(n.as_string());
  if (!a) n.fail(std::string(key) + ": '" + n.as_string() + "' is not an IPv4 address");
  return *a;
}

std::string spi_text(uint32_t spi) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", spi);
  return buf;
}

}  // namespace

IpsecGateway::IpsecGateway(std::string name, IpsecDirection direction,
                           const std::vector<esp::SaConfig>& sas, bool bypass, uint32_t iv_epoch)
    : NetworkFunction(std::move(name)),
      direction_(direction),
      bypass_(bypass),
      iv_epoch_(iv_epoch),
      table_(sas),
      order_("ipsec " + this->name()),
      sa_packets_(kCollectShards, kCounterLanes, sas.size() + 1) {
  std::set<uint32_t> spis;
  for (const auto& sa : sas) {
    if (!spis.insert(sa.spi).second)
      throw std::invalid_argument("ipsec: SPI " + spi_text(sa.spi) + " appears twice");
    if (direction == IpsecDirection::outbound && !sa.match)
      throw std::invalid_argument("ipsec: outbound SA " + spi_text(sa.spi) +
                                  " has no match prefix");
  }
}

IpsecGateway::~IpsecGateway() = default;

std::unique_ptr<IpsecGateway> IpsecGateway::from_config(const ConfigNode& node) {
  node.only_keys({"name", "type", "direction", "bypass", "iv_epoch", "sas"});
  std::string name = node.str("name");
  if (auto type = node.get("type"); type && type->as_string() != "ipsec")
    type->fail("expected type 'ipsec', got '" + type->as_string() + "'");

  ConfigNode dir = node["direction"];
  IpsecDirection direction;
  if (dir.as_string() == "outbound")
    direction = IpsecDirection::outbound;
  else if (dir.as_string() == "inbound")
    direction = IpsecDirection::inbound;
  else
    dir.fail("direction: expected outbound or inbound, got '" + dir.as_string() + "'");
  bool bypass = node.get("bypass") ? node["bypass"].as_bool() : false;
  uint32_t iv_epoch = uint32_t(node.int_or("iv_epoch", 0, 0, 0xFFFFFFFFll));

  ConfigNode list = node["sas"];
  std::vector<esp::SaConfig> sas;
  std::set<uint32_t> spis;
  std::set<std::pair<uint32_t, uint8_t>> prefixes;
  for (const ConfigNode& n : list.items()) {
    n.only_keys({"spi", "enc_key", "auth_key", "local", "remote", "match"});
    esp::SaConfig c;
    // RFC 4303 2.1: SPIs 1-255 are reserved by IANA, 0 for local use.
    c.spi = uint32_t(n["spi"].as_int(256, 0xFFFFFFFFll));
    if (!spis.insert(c.spi).second) n["spi"].fail("SPI " + spi_text(c.spi) + " appears twice");
    uint8_t enc[20];
    parse_hex_key<20>(n, "enc_key", "AES-128 key then the 4-byte RFC 3686 nonce", enc);
    std::copy(enc, enc + 16, c.enc_key.begin());
    std::copy(enc + 16, enc + 20, c.nonce.begin());
    std::fill(enc, enc + 20, 0);
    parse_hex_key<20>(n, "auth_key", "HMAC-SHA1-96 key", c.auth_key.data());
    c.local = parse_address(n, "local");
    c.remote = parse_address(n, "remote");
    if (auto m = n.get("match")) {
      c.match = parse_ipv4_prefix(m->as_string());
      if (!c.match)
        m->fail("match: '" + m->as_string() + "' is not a prefix a.b.c.d/len (host bits zero)");
      if (direction == IpsecDirection::outbound &&
          !prefixes.insert({c.match->addr, c.match->len}).second)
        m->fail("match: two outbound SAs protect " + m->as_string());
    } else if (direction == IpsecDirection::outbound) {
      n.fail("outbound SA " + spi_text(c.spi) +
             ": missing key 'match' (the destination prefix it protects)");
    }
    sas.push_back(c);
  }
  if (sas.empty()) list.fail("sas: at least one SA is needed");
  auto nf = std::make_unique<IpsecGateway>(name, direction, sas, bypass, iv_epoch);
  for (auto& c : sas) c.enc_key.fill(0), c.nonce.fill(0), c.auth_key.fill(0);
  return nf;
}

esp::EspView IpsecGateway::host_view() const {
  return esp::EspView{table_.host_ref(), result_offset(), bypass_, iv_epoch_};
}

void IpsecGateway::process(const BatchView& b, uint32_t begin, uint32_t end,
                           uint8_t position) const {
  const esp::EspView v = host_view();
  // The ordered steps write the CPU backend's SA state; IngressOrder serialises them.
  if (direction_ == IpsecDirection::outbound) {
    for (uint32_t i = begin; i < end; ++i) esp::select_outbound_sa(b, i, position, v);
    order_.run(b, begin, end, position, [&] {
      esp::number_packets(b, begin, end, position, v.result_offset, table_.host_state());
    });
    run_per_packet_cpu(b, begin, end, position, v, esp::Encapsulate{});
  } else {
    run_per_packet_cpu(b, begin, end, position, v, esp::Decapsulate{});
    order_.run(b, begin, end, position, [&] {
      esp::check_replay(b, begin, end, position, v.result_offset, table_.host_state());
    });
  }
}

void IpsecGateway::skip(const BatchView& b, uint8_t position) const {
  order_.run(b, 0, b.count, position, [] {});
}

void IpsecGateway::prepare(Backend backend) {
  if (backend == Backend::cpu) {
    table_.reset_host_state();
    return;
  }
#if GPUNFV_HAVE_CUDA
  prepare_gpu();
#else
  throw std::runtime_error("ipsec " + name() + ": this build has no GPU backend");
#endif
}

bool IpsecGateway::count_on_device() {
#if GPUNFV_HAVE_CUDA
  device_counting_ = true;
#endif
  return device_counting_;
}

void IpsecGateway::finish() {
#if GPUNFV_HAVE_CUDA
  if (device_counts_) sa_packets_.add(device_counts_->take());
#endif
}

void IpsecGateway::collect(const BatchView& b, uint8_t position, const CollectContext& ctx) {
  collect_range(b, position, ctx, 0, b.count, 0);
}

void IpsecGateway::collect_range(const BatchView& b, uint8_t position, const CollectContext&,
                                 uint32_t begin, uint32_t end, uint32_t shard) {
  const CollectScan scan(b, result_offset(), esp::kRecordBytes);
  if (begin > end || end > scan.count()) iso_violation(end, scan.count());
  // Branch-free: packets this NF passed on count for their SA (their records are this
  // batch's); the others, and bypassed ones (kNoSa), count in the sink slot.
  const uint32_t sas = uint32_t(table_.size());
  const size_t lane_size = sa_packets_.slots();
  uint64_t* counts = sa_packets_.shard(shard);
  for (uint32_t i = begin; i < end; ++i) {
    const bool passed = scan.reached(i, position) & !scan.dropped_at(i, position);
    const uint32_t sa = scan.word(i, 0);
    ++counts[(i % kCounterLanes) * lane_size + (passed && sa < sas ? sa : sas)];
  }
}

void IpsecGateway::collect_per_packet(const BatchView& b, uint8_t position) {
  const uint32_t offset = result_offset();
  for (uint32_t i = 0; i < b.count; ++i) {
    // Packets this NF passed on; their records are this batch's.
    if (!reached_node(b, i, position) || dropped_at_node(b, i, position)) continue;
    esp::EspRecord rec = esp::read_record(b, i, offset);
    if (rec.sa >= table_.size()) continue;  // bypassed
    ++sa_packets_.shard(0)[rec.sa];
  }
}

void IpsecGateway::report(nlohmann::json& j) const {
  j["direction"] = direction_ == IpsecDirection::outbound ? "outbound" : "inbound";
  nlohmann::json sas = nlohmann::json::array();
  for (size_t i = 0; i < table_.size(); ++i) {
    const esp::Sa& sa = table_.sa(i);
    sas.push_back({{"spi", spi_text(sa.spi)},
                   {"local", format_ipv4(sa.local)},
                   {"remote", format_ipv4(sa.remote)},
                   {"packets", sa_packets_.total(i)}});
  }
  j["sas"] = std::move(sas);
}

std::string IpsecGateway::command(std::string_view cmd) const {
  if (cmd == "describe") return describe();
  if (cmd != "sas") return "unknown command '" + std::string(cmd) + "' (try: describe, sas)";
  std::string out;
  for (size_t i = 0; i < table_.size(); ++i) {
    const esp::Sa& sa = table_.sa(i);
    out +=
        "spi " + spi_text(sa.spi) + " " + format_ipv4(sa.local) + " <-> " + format_ipv4(sa.remote);
    if (sa.match_mask || direction_ == IpsecDirection::outbound) {
      int len = __builtin_popcount(sa.match_mask);
      out += " match " + format_prefix(Ipv4Prefix{sa.match_addr, uint8_t(len)});
    }
    out += ", " + std::to_string(sa_packets_.total(i)) + " packets\n";
  }
  return out;
}

std::string IpsecGateway::describe() const {
  size_t n = table_.size();
  return "ipsec " + name() + ": " +
         (direction_ == IpsecDirection::outbound ? "outbound" : "inbound") +
         " ESP tunnel, AES-128-CTR + HMAC-SHA1-96, " + std::to_string(n) + " SA" +
         (n == 1 ? "" : "s") + (bypass_ ? ", bypass on" : "");
}

}  // namespace gpunfv
