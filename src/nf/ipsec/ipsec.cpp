#include "nf/ipsec/ipsec.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "nf/collect_scan.h"
#include "nf/ipsec/esp_order.h"
#include "nf/nf_registry.h"
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
                           const std::vector<esp::SaConfig>& sas, bool bypass, uint32_t iv_epoch,
                           uint32_t max_sas)
    : NetworkFunction(std::move(name)),
      direction_(direction),
      bypass_(bypass),
      iv_epoch_(iv_epoch),
      max_sas_(std::max<uint32_t>(max_sas, uint32_t(sas.size()))),
      tables_(std::make_shared<const IpsecTables>(esp::SaTable(sas)), sas.size()),
      next_slot_(uint32_t(sas.size())),
      host_state_(max_sas_),
      order_("ipsec " + this->name()),
      sa_packets_(kCollectShards, size_t(max_sas_) + 1) {
  std::set<uint32_t> spis;
  for (const auto& sa : sas) {
    if (!spis.insert(sa.spi).second)
      throw std::invalid_argument("ipsec: SPI " + spi_text(sa.spi) + " appears twice");
    if (direction == IpsecDirection::outbound && !sa.match)
      throw std::invalid_argument("ipsec: outbound SA " + spi_text(sa.spi) +
                                  " has no match prefix");
    slot_info_.push_back(SlotInfo{sa.spi, sa.local, sa.remote, sa.match});
  }
}

IpsecGateway::~IpsecGateway() = default;

esp::SaConfig IpsecGateway::sa_from_config(const ConfigNode& n, IpsecDirection direction) {
  n.only_keys({"spi", "enc_key", "auth_key", "local", "remote", "match"});
  esp::SaConfig c;
  // RFC 4303 2.1: SPIs 1-255 are reserved by IANA, 0 for local use.
  c.spi = uint32_t(n["spi"].as_int(256, 0xFFFFFFFFll));
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
  } else if (direction == IpsecDirection::outbound) {
    n.fail("outbound SA " + spi_text(c.spi) +
           ": missing key 'match' (the destination prefix it protects)");
  }
  return c;
}

std::unique_ptr<IpsecGateway> IpsecGateway::from_config(const ConfigNode& node) {
  node.only_keys({"name", "type", "direction", "bypass", "iv_epoch", "max_sas", "sas"});
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
  const uint32_t max_sas = uint32_t(node.int_or("max_sas", kDefaultMaxSas, 1, kMostSas));

  ConfigNode list = node["sas"];
  std::vector<esp::SaConfig> sas;
  std::set<uint32_t> spis;
  std::set<std::pair<uint32_t, uint8_t>> prefixes;
  for (const ConfigNode& n : list.items()) {
    esp::SaConfig c = sa_from_config(n, direction);
    if (!spis.insert(c.spi).second) n["spi"].fail("SPI " + spi_text(c.spi) + " appears twice");
    if (c.match && direction == IpsecDirection::outbound &&
        !prefixes.insert({c.match->addr, c.match->len}).second)
      n["match"].fail("match: two outbound SAs protect " + n["match"].as_string());
    sas.push_back(c);
  }
  if (sas.empty()) list.fail("sas: at least one SA is needed");
  if (sas.size() > max_sas)
    node["max_sas"].fail("max_sas: " + std::to_string(max_sas) + " is fewer than the " +
                         std::to_string(sas.size()) + " SAs configured");
  auto nf = std::make_unique<IpsecGateway>(name, direction, sas, bypass, iv_epoch, max_sas);
  for (auto& c : sas) c.enc_key.fill(0), c.nonce.fill(0), c.auth_key.fill(0);
  return nf;
}

uint64_t IpsecGateway::add_sa(const esp::SaConfig& c, std::string what) {
  std::lock_guard<std::mutex> lk(update_m_);
  std::vector<esp::SaEntry> entries = table().entries();
  for (const esp::SaEntry& e : entries) {
    if (e.sa.spi == c.spi)
      throw std::invalid_argument("SPI " + spi_text(c.spi) + " exists already (sa del it first)");
    if (direction_ == IpsecDirection::outbound && c.match && e.match && *e.match == *c.match)
      throw std::invalid_argument("match: SA " + spi_text(e.sa.spi) + " protects " +
                                  format_prefix(*c.match) + " already");
  }
  if (direction_ == IpsecDirection::outbound && !c.match)
    throw std::invalid_argument("outbound SA " + spi_text(c.spi) +
                                ": missing key 'match' (the destination prefix it protects)");
  if (next_slot_ >= max_sas_)
    throw std::invalid_argument("the run has had max_sas (" + std::to_string(max_sas_) +
                                ") SAs: deleted SAs' slots are reused only after a restart");
  const uint32_t slot = next_slot_;
  entries.push_back(esp::SaEntry{slot, esp::make_sa(c), c.match});
  auto next = make_version(std::move(entries));
  {
    std::lock_guard<std::mutex> info(info_m_);
    slot_info_.push_back(SlotInfo{c.spi, c.local, c.remote, c.match});
  }
  ++next_slot_;
  return swap_in(std::move(next), std::move(what));
}

uint64_t IpsecGateway::delete_sa(uint32_t spi, std::string what) {
  std::lock_guard<std::mutex> lk(update_m_);
  std::vector<esp::SaEntry> entries = table().entries();
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const esp::SaEntry& e) { return e.sa.spi == spi; });
  if (it == entries.end()) throw std::invalid_argument("no SA with SPI " + spi_text(spi));
  const uint32_t slot = it->slot;
  entries.erase(it);
  const uint64_t version = swap_in(make_version(std::move(entries)), std::move(what));
  std::lock_guard<std::mutex> info(info_m_);
  slot_info_[slot].deleted = true;
  return version;
}

std::shared_ptr<const IpsecTables> IpsecGateway::make_version(std::vector<esp::SaEntry> entries) {
  auto next = std::make_shared<IpsecTables>(esp::SaTable(std::move(entries)));
#if GPUNFV_HAVE_CUDA
  if (backend_ == Backend::gpu) next->upload();
#endif
  return next;
}

uint64_t IpsecGateway::swap_in(std::shared_ptr<const IpsecTables> next, std::string what) {
  const size_t n = next->table.size();
  auto old = tables_.publish(std::move(next), std::move(what), n);
#if GPUNFV_HAVE_CUDA
  retire(std::move(old));
#endif
  return tables_.version();
}

void IpsecGateway::process(const BatchView& b, uint32_t begin, uint32_t end,
                           uint8_t position) const {
  // One SA table for the whole batch, held until its ordered step is done.
  const auto t = tables_.pin();
  const esp::EspView v = view_of(t->table.host_ref());
  const IsoSpan<esp::SaState> state = host_state();
  // The ordered steps write the CPU backend's SA state; IngressOrder serialises them.
  const uint8_t first_drop = first_drop_code<IpsecDrop>();
  const NfPackets<> packets = packets_at(b, position, first_drop);
  if (direction_ == IpsecDirection::outbound) {
    for (uint32_t i = begin; i < end; ++i) esp::select_outbound_sa(packets, i, v);
    order_.run(b, begin, end, position, [&] { esp::number_packets(packets, begin, end, state); });
    t.count(run_per_packet_cpu(packets_at<PacketAccess::rewrite>(b, position, first_drop),
                               begin, end, v, esp::Encapsulate{}));
  } else {
    t.count(run_per_packet_cpu(packets_at<PacketAccess::rewrite>(b, position, first_drop),
                               begin, end, v, esp::Decapsulate{}));
    order_.run(b, begin, end, position, [&] { esp::check_replay(packets, begin, end, state); });
  }
}

void IpsecGateway::skip(const BatchView& b, uint8_t position) const {
  order_.run(b, 0, b.count, position, [] {});
}

void IpsecGateway::prepare(Backend backend) {
  backend_ = backend;
  if (backend == Backend::cpu) {
    host_state_.assign(max_sas_, esp::SaState{});
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
  // The run is over: every launch is complete.
  device_users_.clear();
  const auto live = tables_.pin();
  live->device_packets.take(live.packets);
#endif
}

void IpsecGateway::collect(const BatchView& b, uint8_t position, const CollectContext& ctx) {
  collect_range(b, position, ctx, 0, b.count, 0);
}

void IpsecGateway::collect_range(const BatchView& b, uint8_t position, const CollectContext&,
                                 uint32_t begin, uint32_t end, uint32_t shard) {
  const CollectScan scan(b, result_offset(), esp::kRecordBytes);
  if (begin > end || end > scan.count()) iso_violation(end, scan.count());
  // Branch-free: packets this NF passed on count for their SA's slot (their records are this
  // batch's); the others, and bypassed ones (kNoSa), count in the sink slot.
  const uint32_t sas = max_sas_;
  sa_packets_.count_packets(shard, begin, end, [&](uint32_t i) {
    const bool passed = scan.reached(i, position) & !scan.dropped_at(i, position);
    const uint32_t sa = scan.word(i, 0);
    return PacketCount{passed && sa < sas ? sa : sas, 1};
  });
}

void IpsecGateway::collect_per_packet(const BatchView& b, uint8_t position) {
  const uint32_t offset = result_offset();
  for (uint32_t i = 0; i < b.count; ++i) {
    // Packets this NF passed on; their records are this batch's.
    if (!reached_node(b, i, position) || dropped_at_node(b, i, position)) continue;
    esp::EspRecord rec = esp::read_record(b, i, offset);
    if (rec.sa >= max_sas_) continue;  // bypassed
    ++sa_packets_.shard(0)[rec.sa];
  }
}

void IpsecGateway::report(nlohmann::json& j) const {
  j["direction"] = direction_ == IpsecDirection::outbound ? "outbound" : "inbound";
  nlohmann::json sas = nlohmann::json::array();
  {
    std::lock_guard<std::mutex> info(info_m_);
    for (size_t slot = 0; slot < slot_info_.size(); ++slot) {
      const SlotInfo& s = slot_info_[slot];
      nlohmann::json e = {{"spi", spi_text(s.spi)},
                          {"local", format_ipv4(s.local)},
                          {"remote", format_ipv4(s.remote)},
                          {"packets", sa_packets_.total(slot)}};
      if (s.deleted) e["deleted"] = true;
      sas.push_back(std::move(e));
    }
  }
  j["sas"] = std::move(sas);
  j["table_version"] = tables_.version();
  j["table_versions"] = tables_.log().json();
}

std::string IpsecGateway::command(std::string_view cmd) const {
  if (cmd == "describe") return describe();
  if (cmd != "sas") return "unknown command '" + std::string(cmd) + "' (try: describe, sas)";
  const auto t = tables_.pin();
  std::lock_guard<std::mutex> info(info_m_);
  std::string out;
  for (const esp::SaEntry& e : t->table.entries()) {
    const SlotInfo& s = slot_info_[e.slot];
    out += "spi " + spi_text(s.spi) + " " + format_ipv4(s.local) + " <-> " + format_ipv4(s.remote);
    if (s.match) out += " match " + format_prefix(*s.match);
    out += ", " + std::to_string(sa_packets_.total(e.slot)) + " packets\n";
  }
  return out;
}

std::string IpsecGateway::describe() const {
  size_t n = table().size();
  return "ipsec " + name() + ": " +
         (direction_ == IpsecDirection::outbound ? "outbound" : "inbound") +
         " ESP tunnel, AES-128-CTR + HMAC-SHA1-96, " + std::to_string(n) + " SA" +
         (n == 1 ? "" : "s") + (bypass_ ? ", bypass on" : "");
}

GPUNFV_REGISTER_NF("ipsec", IpsecGateway);

}  // namespace gpunfv
