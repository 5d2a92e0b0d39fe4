// Drop reasons an NF type declares in its own folder, as a VPP node declares its error
// counters. In the NF's header:
//
//   #define TTL_FILTER_DROPS(X) X(ttl_too_low, "TTL below the filter's minimum")
//   GPUNFV_NF_DROP_REASONS(TtlFilterDrop, "ttl_filter", TTL_FILTER_DROPS);
//
// declares `enum class TtlFilterDrop`. Its per-packet function returns an NfVerdict: pass
// (DropReason::none), a framework reason (DropReason::not_ipv4) or one of its own
// (TtlFilterDrop::ttl_too_low). The reasons get their codes, and their names in counters and
// reports, when the NF type is first used (`first_drop_code<TtlFilterDrop>()`); the framework
// turns the NF's own reason into its code (NfVerdict::code) where it applies the verdict.
// Names are unique in a run: one taken by the framework or another NF type is refused.
#pragma once

#include <cstdint>
#include <span>

#include "core/compat.h"
#include "core/drop_reason.h"

#define GPUNFV_NF_DROP_ID(id, desc) id,
#define GPUNFV_NF_DROP_DECL(id, desc) ::gpunfv::DropReasonDecl{#id, desc},

// Declares `enum class Enum` (one enumerator per reason of LIST) in the current namespace, and
// the functions that give its reasons their codes (found by argument-dependent lookup).
#define GPUNFV_NF_DROP_REASONS(Enum, owner, LIST)                                           \
  enum class Enum : uint8_t { LIST(GPUNFV_NF_DROP_ID) };                                    \
  inline std::span<const ::gpunfv::DropReasonDecl> gpunfv_nf_drop_decls(Enum) {            \
    static constexpr ::gpunfv::DropReasonDecl decls[] = {LIST(GPUNFV_NF_DROP_DECL)};        \
    return decls;                                                                           \
  }                                                                                         \
  inline uint8_t gpunfv_nf_first_drop_code(Enum) {                                          \
    static const uint8_t first = ::gpunfv::add_drop_reasons(owner, gpunfv_nf_drop_decls(Enum{})); \
    return first;                                                                           \
  }                                                                                         \
  static_assert(sizeof(Enum) == 1)

namespace gpunfv {

template <class E>
concept NfDropEnum = requires(E e) { gpunfv_nf_first_drop_code(e); };

// Host: the code of E's first reason; registers E's reasons on first use.
template <NfDropEnum E>
uint8_t first_drop_code() {
  return gpunfv_nf_first_drop_code(E{});
}

// Host: the code of one of an NF's own reasons (what a packet's verdict holds).
template <NfDropEnum E>
DropReason drop_reason(E e) {
  return static_cast<DropReason>(first_drop_code<E>() + uint8_t(e));
}

// Host: the code of the first own reason of a per-packet function type that names its reasons
// (`using Drops = E;`); 0 for one that returns framework reasons only.
template <class Fn>
uint8_t first_drop_code_of() {
  if constexpr (requires { typename Fn::Drops; })
    return first_drop_code<typename Fn::Drops>();
  else
    return 0;
}

// What an NF's per-packet function returns for a packet.
class NfVerdict {
 public:
  GPUNFV_HD constexpr NfVerdict(DropReason r) : v_(static_cast<uint8_t>(r)) {}
  template <NfDropEnum E>
  GPUNFV_HD constexpr NfVerdict(E e) : v_(static_cast<uint8_t>(kOwn | static_cast<uint8_t>(e))) {}

  GPUNFV_HD constexpr bool passes() const { return v_ == 0; }
  // The verdict's code, given the code of the NF's first own reason.
  GPUNFV_HD constexpr uint8_t code(uint8_t first_own) const {
    return (v_ & kOwn) ? static_cast<uint8_t>(first_own + (v_ & ~kOwn)) : v_;
  }
  friend constexpr bool operator==(NfVerdict, NfVerdict) = default;

 private:
  static constexpr uint8_t kOwn = 0x80;  // framework codes stay below it (kMaxDropReasons)
  uint8_t v_;
};
static_assert(kMaxDropReasons <= 0x80);

}  // namespace gpunfv
