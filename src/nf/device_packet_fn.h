// An NF's per-packet function as data, for a kernel that runs a whole chain per packet
// without launching the NF's own kernel (the persistent pipeline, chain/persistent_chain.h):
// which function (a kind) and its device view (the bytes of a trivially copyable struct).
// The kernel dispatches on the kind (nf/device_packet_fn.cuh), so only NFs listed there can
// run in it; a chain holding another NF is issued kernel by kernel as before.
//
// Per batch an NF hands out a DevicePacketUse: the function with the view of its tables now,
// and `done`, called on the host with the packets sent to the NF once the batch came back
// (e.g. to release the table copy the view points at and count its packets).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

#include "core/batch.h"
#include "core/compat.h"
#include "core/iso_view.h"

namespace gpunfv {

// quarantined: the NF's packets are dropped as nf_isolation_fault (NetworkFunction::quarantine).
enum class DevicePacketFnKind : uint8_t { none, router, firewall, quarantined };

inline constexpr size_t kDevicePacketViewBytes = 256;

struct DevicePacketFn {
  DevicePacketFnKind kind = DevicePacketFnKind::none;
  NfSlot slot;  // the NF's first own drop code and results slice (core/batch.h)
  alignas(16) unsigned char view[kDevicePacketViewBytes] = {};

  template <class View>
  static DevicePacketFn of(DevicePacketFnKind kind, const View& v, NfSlot slot) {
    static_assert(iso_view<View>, GPUNFV_ISO_VIEW_MESSAGE);
    static_assert(sizeof(View) <= kDevicePacketViewBytes && alignof(View) <= 16);
    DevicePacketFn f;
    f.kind = kind;
    f.slot = slot;
    std::memcpy(f.view, &v, sizeof(View));
    return f;
  }
  template <class View>
  GPUNFV_HD const View& as() const {
    return *reinterpret_cast<const View*>(view);
  }
};
static_assert(std::is_trivially_copyable_v<DevicePacketFn>);

struct DevicePacketUse {
  DevicePacketFn fn;
  std::function<void(uint32_t packets)> done;  // may be empty
};

}  // namespace gpunfv
