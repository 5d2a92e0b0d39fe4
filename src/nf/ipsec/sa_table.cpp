#include "nf/ipsec/sa_table.h"

#include <algorithm>

namespace gpunfv::esp {

Sa make_sa(const SaConfig& c) {
  Sa sa{};
  sa.enc = aes::expand_key(c.enc_key.data());
  sa.auth = hmac_sha1::make_key(IsoSpan<const uint8_t>(c.auth_key.data(), c.auth_key.size()));
  sa.nonce = (uint32_t(c.nonce[0]) << 24) | (uint32_t(c.nonce[1]) << 16) |
             (uint32_t(c.nonce[2]) << 8) | c.nonce[3];
  sa.spi = c.spi;
  sa.local = c.local;
  sa.remote = c.remote;
  if (c.match) {
    sa.match_mask = c.match->len == 0 ? 0 : ~uint32_t(0) << (32 - c.match->len);
    sa.match_addr = c.match->addr & sa.match_mask;
  }
  return sa;
}

namespace {

std::vector<SaEntry> in_order(const std::vector<SaConfig>& configs) {
  std::vector<SaEntry> out;
  out.reserve(configs.size());
  for (uint32_t i = 0; i < configs.size(); ++i)
    out.push_back(SaEntry{i, make_sa(configs[i]), configs[i].match});
  return out;
}

}  // namespace

SaTable::SaTable(const std::vector<SaConfig>& configs) : SaTable(in_order(configs)) {}

SaTable::SaTable(std::vector<SaEntry> entries) : entries_(std::move(entries)) {
  uint32_t span = 0;
  for (const SaEntry& e : entries_) span = std::max(span, e.slot + 1);
  sas_.assign(span, Sa{});
  for (const SaEntry& e : entries_) sas_[e.slot] = e.sa;

  // Outbound: SAs with a `match` prefix, longest first (ties in table order), so the first hit
  // of the linear scan is the longest match.
  std::vector<const SaEntry*> matched;
  for (const SaEntry& e : entries_)
    if (e.match) matched.push_back(&e);
  std::stable_sort(matched.begin(), matched.end(),
                   [](const SaEntry* a, const SaEntry* b) { return a->match->len > b->match->len; });
  for (const SaEntry* e : matched) by_prefix_.push_back(e->slot);

  // Inbound: SPIs sorted for binary search.
  std::vector<const SaEntry*> order;
  for (const SaEntry& e : entries_) order.push_back(&e);
  std::sort(order.begin(), order.end(),
            [](const SaEntry* a, const SaEntry* b) { return a->sa.spi < b->sa.spi; });
  for (const SaEntry* e : order) {
    spis_.push_back(e->sa.spi);
    spi_sa_.push_back(e->slot);
  }
}

const SaEntry* SaTable::find_spi(uint32_t spi) const {
  for (const SaEntry& e : entries_)
    if (e.sa.spi == spi) return &e;
  return nullptr;
}

namespace {
template <typename T>
IsoSpan<const T> const_span(const std::vector<T>& v) {
  return IsoSpan<const T>(v.data(), v.size());
}
}  // namespace

SaTableRef SaTable::host_ref() const {
  return SaTableRef{const_span(sas_), const_span(by_prefix_), const_span(spis_),
                    const_span(spi_sa_)};
}

#if GPUNFV_HAVE_CUDA
void SaTable::upload_to_device() {
  if (uploaded_) return;
  device_sas_.upload(sas_);
  device_by_prefix_.upload(by_prefix_);
  device_spis_.upload(spis_);
  device_spi_sa_.upload(spi_sa_);
  uploaded_ = true;
}

SaTableRef SaTable::device_ref() const {
  auto c = [](const auto& buf) {
    using T = typename std::remove_reference_t<decltype(buf.span())>::element_type;
    return IsoSpan<const T>(buf.data(), buf.size());
  };
  return SaTableRef{c(device_sas_), c(device_by_prefix_), c(device_spis_), c(device_spi_sa_)};
}
#endif

}  // namespace gpunfv::esp
