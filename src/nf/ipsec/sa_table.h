// The security association database of one IPsec NF, cuCollections-style: SaTable owns the
// SAs (host vectors, and device copies once uploaded); SaTableRef is the trivially copyable
// view per-packet code reads on either backend.
//
// An SA holds derived key material only (AES round keys, HMAC inner/outer states), never the
// configured key bytes, and nothing here formats keys: keys never reach a log or a report.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/compat.h"
#include "core/ipv4_prefix.h"
#include "core/iso_span.h"
#include "nf/ipsec/aes128.h"
#include "nf/ipsec/hmac_sha1.h"
#include "nf/ipsec/replay_window.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv::esp {

inline constexpr uint32_t kNoSa = 0xFFFFFFFFu;

// One SA as the per-packet code reads it.
struct Sa {
  aes::Key128 enc;      // AES-128 round keys
  hmac_sha1::Key auth;  // HMAC-SHA1 chaining states after the padded key blocks
  uint32_t nonce = 0;   // RFC 3686 nonce: the last 4 bytes of the enc key material
  uint32_t spi = 0;
  uint32_t local = 0;   // tunnel endpoints, host byte order: outer source outbound
  uint32_t remote = 0;  // outer destination outbound
  uint32_t match_addr = 0, match_mask = 0;  // protected destination prefix (outbound)
};
static_assert(std::is_trivially_copyable_v<Sa>);

struct SaTableRef {
  IsoSpan<const Sa> sas;
  IsoSpan<const uint32_t> by_prefix;  // SA indices, longest `match` prefix first
  IsoSpan<const uint32_t> spis;       // SPIs in ascending order
  IsoSpan<const uint32_t> spi_sa;     // SA index of spis[i]

  // Outbound SA selection: the longest `match` prefix covering `dst` (host byte order), or
  // kNoSa. A linear scan: gateways hold a handful of SAs; a table of thousands would use the
  // router's DIR-24-8 instead.
  GPUNFV_HD uint32_t find_by_destination(uint32_t dst) const {
    for (size_t i = 0; i < by_prefix.size(); ++i) {
      const Sa& sa = sas[by_prefix[i]];
      if ((dst & sa.match_mask) == sa.match_addr) return by_prefix[i];
    }
    return kNoSa;
  }

  // Inbound SA lookup by SPI: binary search over the sorted SPIs, or kNoSa.
  GPUNFV_HD uint32_t find_by_spi(uint32_t spi) const {
    size_t lo = 0, hi = spis.size();
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      uint32_t v = spis[mid];
      if (v == spi) return spi_sa[mid];
      if (v < spi)
        lo = mid + 1;
      else
        hi = mid;
    }
    return kNoSa;
  }
};
static_assert(std::is_trivially_copyable_v<SaTableRef>);

// An SA as configured (host side only, short-lived: the table keeps derived material).
struct SaConfig {
  uint32_t spi = 0;
  std::array<uint8_t, 16> enc_key{};   // AES-128 key
  std::array<uint8_t, 4> nonce{};      // RFC 3686 nonce
  std::array<uint8_t, 20> auth_key{};  // HMAC-SHA1 key (RFC 2404: 160 bits)
  uint32_t local = 0, remote = 0;
  std::optional<Ipv4Prefix> match;
};

// Derives the per-packet form of one SA.
Sa make_sa(const SaConfig& c);

class SaTable {
 public:
  // SPIs must be distinct (checked by the caller, which can name the config line).
  explicit SaTable(const std::vector<SaConfig>& configs);

  size_t size() const { return sas_.size(); }
  const Sa& sa(size_t i) const { return sas_[i]; }
  SaTableRef host_ref() const;
  // Per-SA state of the CPU backend (written only by the ordered passes, one at a time).
  IsoSpan<SaState> host_state() const {
    return IsoSpan<SaState>(host_state_.data(), host_state_.size());
  }
  void reset_host_state();

#if GPUNFV_HAVE_CUDA
  // Copies the SAs to the device and resets the device state; then device_ref()/device_state().
  void upload_to_device();
  SaTableRef device_ref() const;
  IsoSpan<SaState> device_state() const { return device_state_.span(); }
#endif

 private:
  std::vector<Sa> sas_;
  std::vector<uint32_t> by_prefix_, spis_, spi_sa_;
  // Mutable: packets change it while the table itself stays read-only.
  mutable std::vector<SaState> host_state_;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<Sa> device_sas_;
  DeviceBuffer<uint32_t> device_by_prefix_, device_spis_, device_spi_sa_;
  DeviceBuffer<SaState> device_state_;
#endif
};

}  // namespace gpunfv::esp
