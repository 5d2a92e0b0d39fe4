// The security association database of one IPsec NF, cuCollections-style: SaTable owns one
// version of the SAs (host vectors, and device copies once uploaded); SaTableRef is the
// trivially copyable view per-packet code reads on either backend. The per-SA state (SaState)
// lives outside the table, with the NF, indexed by the SA's slot.
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
  IsoSpan<const Sa> sas;              // by slot
  IsoSpan<const uint32_t> by_prefix;  // SA slots, longest `match` prefix first
  IsoSpan<const uint32_t> spis;       // SPIs in ascending order
  IsoSpan<const uint32_t> spi_sa;     // SA slot of spis[i]

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

// One SA of a table version: its state slot and what selection needs besides the Sa.
struct SaEntry {
  uint32_t slot = 0;  // index into the per-SA state and counters (and the table's `sas`)
  Sa sa;
  std::optional<Ipv4Prefix> match;
};

// One version of the SA database, read-only once built. An SA's index in the per-packet code
// (EspRecord::sa, SaTableRef::sas) is its state slot: slots are given out once per run, so an
// SA kept across a live change keeps its slot and with it its sequence number and replay
// window, and a packet's record names the same SA in every version.
class SaTable {
 public:
  // Slots must be distinct, SPIs too (checked by the caller, which can name the line).
  explicit SaTable(std::vector<SaEntry> entries);
  // Slots 0, 1, ... in configuration order.
  explicit SaTable(const std::vector<SaConfig>& configs);

  size_t size() const { return entries_.size(); }
  // The i-th SA, in the order they were configured or added.
  const Sa& sa(size_t i) const { return entries_[i].sa; }
  const std::vector<SaEntry>& entries() const { return entries_; }
  // The entry with this SPI, or nullptr.
  const SaEntry* find_spi(uint32_t spi) const;
  // Highest slot + 1: the size of the `sas` array the per-packet code indexes.
  uint32_t slot_span() const { return uint32_t(sas_.size()); }
  SaTableRef host_ref() const;
  // The SAs' slots in ascending SPI order: the ordered passes' work list.
  IsoSpan<const uint32_t> host_slots() const {
    return IsoSpan<const uint32_t>(spi_sa_.data(), spi_sa_.size());
  }

#if GPUNFV_HAVE_CUDA
  // Copies the SAs to the device (once); then device_ref()/device_slots().
  void upload_to_device();
  bool on_device() const { return uploaded_; }
  SaTableRef device_ref() const;
  IsoSpan<const uint32_t> device_slots() const {
    return IsoSpan<const uint32_t>(device_spi_sa_.data(), device_spi_sa_.size());
  }
#endif

 private:
  std::vector<SaEntry> entries_;
  std::vector<Sa> sas_;  // by slot; slots of no SA of this version stay zero and unreferenced
  std::vector<uint32_t> by_prefix_, spis_, spi_sa_;
#if GPUNFV_HAVE_CUDA
  bool uploaded_ = false;
  DeviceBuffer<Sa> device_sas_;
  DeviceBuffer<uint32_t> device_by_prefix_, device_spis_, device_spi_sa_;
#endif
};

}  // namespace gpunfv::esp
