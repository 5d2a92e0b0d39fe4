// The IPsec gateway's per-packet path: SAs and frames, both from the input, through ingress
// classification and an outbound gateway, then what it encapsulated through ingress
// classification and an inbound gateway with the same SAs, both on the CPU backend. Checked:
// outbound picks the SA of the longest matching prefix (or drops with a reason that applies),
// and inbound restores every encapsulated packet byte for byte (Ethernet padding after the IP
// packet is not part of it).
//
// Input: an SA count byte (1 to 4), per SA 4 SPI bytes, 40 key bytes (AES key, nonce, HMAC
// key), 4 address bytes and a prefix length byte of its `match`; the rest is frames.
#include <cstdint>
#include <vector>

#include "core/parse.h"
#include "fuzz/fuzz_util.h"
#include "nf/ipsec/ipsec.h"
#include "nf/ipsec/esp.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

constexpr uint32_t kStride = 2048;

uint32_t mask_of(uint8_t len) { return len == 0 ? 0 : 0xFFFFFFFFu << (32 - len); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  std::vector<esp::SaConfig> sas;
  const uint32_t count = in.u8() % 4 + 1;
  for (uint32_t k = 0; k < count; ++k) {
    esp::SaConfig c;
    c.spi = in.u32() | 0x100;  // SPIs 1-255 are reserved (RFC 4303)
    for (auto& b : c.enc_key) b = in.u8();
    for (auto& b : c.nonce) b = in.u8();
    for (auto& b : c.auth_key) b = in.u8();
    c.local = 0xC6336401;   // 198.51.100.1
    c.remote = 0xCB007101;  // 203.0.113.1
    uint32_t addr = in.u32();
    uint8_t len = in.u8() % 33;
    c.match = Ipv4Prefix{addr & mask_of(len), len};
    bool dup = false;
    for (const auto& s : sas) dup |= s.spi == c.spi;
    if (!dup) sas.push_back(c);  // the configuration refuses a repeated SPI
  }
  std::vector<esp::SaConfig> inbound_sas = sas;
  for (auto& s : inbound_sas) s.match.reset();
  OneNfChain out(std::make_unique<IpsecGateway>("out", IpsecDirection::outbound, sas));
  OneNfChain back(std::make_unique<IpsecGateway>("in", IpsecDirection::inbound, inbound_sas));

  const auto frames = read_frames(in, 32, 2100);
  auto batch = make_batch(frames, kStride, esp::kRecordBytes);
  const BatchView v = batch->view();
  out.run(v);
  check_accounted(v);

  std::vector<std::vector<uint8_t>> esp_frames, expect;
  for (uint32_t i = 0; i < v.count; ++i) {
    const std::vector<uint8_t>& f = frames[i];
    PacketHeaders h{};
    DropReason parsed = f.size() > kStride
                            ? DropReason::oversize
                            : parse_headers(IsoSpan<const uint8_t>(f.data(), f.size()), h);
    const DropReason got = DropReason(v.verdict[i]);
    if (parsed != DropReason::none) {
      FUZZ_CHECK(got == parsed);
      continue;
    }
    if (h.ip_version != 4) {
      FUZZ_CHECK(got == DropReason::not_ipv4);
      continue;
    }
    // The SA: longest `match` prefix covering the destination (ambiguous if two SAs share it).
    const uint32_t dst = be32(f.data() + h.l3_off + 16);
    int best = -1;
    bool tie = false;
    for (size_t k = 0; k < sas.size(); ++k) {
      if ((dst & mask_of(sas[k].match->len)) != sas[k].match->addr) continue;
      if (best >= 0 && sas[k].match->len == sas[size_t(best)].match->len) tie = true;
      if (best < 0 || sas[k].match->len > sas[size_t(best)].match->len) best = int(k), tie = false;
    }
    if (best < 0) {
      FUZZ_CHECK(got == drop_reason(IpsecDrop::ipsec_no_sa));
      continue;
    }
    if (got == DropReason::oversize) continue;  // the slot cannot hold the ESP packet
    FUZZ_CHECK(got == DropReason::none);
    const uint8_t* o = v.data.framework_data() + size_t(i) * kStride;
    const uint32_t olen = v.len[i];
    FUZZ_CHECK(olen <= kStride && olen >= h.l3_off + 20u + 8u);
    FUZZ_CHECK(o[h.l3_off + 9] == 50);  // ESP
    if (!tie) FUZZ_CHECK(be32(o + h.l3_off + 20) == sas[size_t(best)].spi);
    esp_frames.emplace_back(o, o + olen);
    const uint32_t ip_end = h.l3_off + be16(f.data() + h.l3_off + 2);
    expect.emplace_back(f.begin(), f.begin() + ip_end);
  }

  auto esp_batch = make_batch(esp_frames, kStride, esp::kRecordBytes);
  const BatchView e = esp_batch->view();
  back.run(e);
  check_accounted(e);
  for (uint32_t i = 0; i < e.count; ++i) {
    FUZZ_CHECK(DropReason(e.verdict[i]) == DropReason::none);
    FUZZ_CHECK(e.len[i] == expect[i].size());
    FUZZ_CHECK(std::memcmp(e.data.framework_data() + size_t(i) * kStride, expect[i].data(),
                           expect[i].size()) == 0);
  }
  return 0;
}
