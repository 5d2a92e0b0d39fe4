// TTL filter NF, the Generalized TTL Security Mechanism (RFC 5082): drops IPv4 packets whose
// TTL, and IPv6 packets whose hop limit, is below min_ttl, so that a session meant for a peer
// one hop away (BGP, min_ttl: 255) cannot be reached from further off. Other frames pass.
//
//   - {name: gtsm, type: ttl_filter, min_ttl: 255}
#pragma once

#include <memory>
#include <string>

#include "nf/per_packet_nf.h"

namespace gpunfv {

#define GPUNFV_TTL_FILTER_DROPS(X) X(ttl_below_minimum, "TTL or hop limit below min_ttl")
GPUNFV_NF_DROP_REASONS(TtlFilterDrop, "ttl_filter", GPUNFV_TTL_FILTER_DROPS);

struct TtlFilterView {
  uint8_t min_ttl;
};

struct TtlFilterLogic {
  using Drops = TtlFilterDrop;
  GPUNFV_HD NfVerdict operator()(const TtlFilterView& v, PacketReader p) const {
    const PacketHeaders& h = p.headers();
    if (h.ip_version != 4 && h.ip_version != 6) return DropReason::none;
    // IPv4's TTL is byte 8 of its header, IPv6's hop limit byte 7.
    const uint8_t ttl = p.frame()[h.l3_off + (h.ip_version == 4 ? 8u : 7u)];
    return ttl < v.min_ttl ? NfVerdict(TtlFilterDrop::ttl_below_minimum) : DropReason::none;
  }
};

class TtlFilter final : public PerPacketNf<TtlFilter, TtlFilterView, TtlFilterLogic> {
 public:
  TtlFilter(std::string name, uint8_t min_ttl) : PerPacketNf(std::move(name)), min_ttl_(min_ttl) {}
  // Keys: name, type, min_ttl (1-255, default 255). Throws ConfigError.
  static std::unique_ptr<TtlFilter> from_config(const ConfigNode& node);

  std::string_view type() const override { return "ttl_filter"; }
  std::string describe() const override;
  TtlFilterView view(Backend) const { return {min_ttl_}; }

 private:
  uint8_t min_ttl_;
};

}  // namespace gpunfv
