#include "nf/ipsec/sa_table.h"

#include <algorithm>
#include <numeric>

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

SaTable::SaTable(const std::vector<SaConfig>& configs) {
  sas_.reserve(configs.size());
  for (const SaConfig& c : configs) sas_.push_back(make_sa(c));

  // Outbound: SAs with a `match` prefix, longest first (ties in configuration order), so the
  // first hit of the linear scan is the longest match.
  for (uint32_t i = 0; i < configs.size(); ++i)
    if (configs[i].match) by_prefix_.push_back(i);
  std::stable_sort(by_prefix_.begin(), by_prefix_.end(), [&](uint32_t a, uint32_t b) {
    return configs[a].match->len > configs[b].match->len;
  });

  // Inbound: SPIs sorted for binary search.
  std::vector<uint32_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return configs[a].spi < configs[b].spi; });
  for (uint32_t i : order) {
    spis_.push_back(configs[i].spi);
    spi_sa_.push_back(i);
  }
  reset_host_state();
}

void SaTable::reset_host_state() { host_state_.assign(sas_.size(), SaState{}); }

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
  device_sas_.upload(sas_);
  device_by_prefix_.upload(by_prefix_);
  device_spis_.upload(spis_);
  device_spi_sa_.upload(spi_sa_);
  device_state_.upload(std::vector<SaState>(sas_.size(), SaState{}));
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
