// The dispatch over every NF whose per-packet function can run inside a chain kernel
// (nf/device_packet_fn.h). Adding an NF here: its kind, its view type and its logic.
#pragma once

#include "nf/device_packet_fn.h"
#include "nf/firewall/firewall_logic.h"
#include "nf/router/router_logic.h"
#include "nf/run_per_packet.h"

namespace gpunfv {

// A quarantined NF's stand-in: drops every packet sent to it.
struct QuarantinedView {};
struct QuarantinedLogic {
  GPUNFV_HD NfVerdict operator()(const QuarantinedView&, PacketReader) const {
    return DropReason::nf_isolation_fault;
  }
};

// Applies `f` to packet i if it is alive and at `position` (step_packet); returns whether it did.
GPUNFV_HD inline bool step_device_packet_fn(const BatchView& b, uint32_t i, uint8_t position,
                                            const DevicePacketFn& f) {
  switch (f.kind) {
    case DevicePacketFnKind::router:
      return step_packet(b, i, position, f.as<RouterView>(), RouterLogic{}, f.slot);
    case DevicePacketFnKind::firewall:
      return step_packet(b, i, position, f.as<FirewallView>(), FirewallLogic{}, f.slot);
    case DevicePacketFnKind::quarantined:
      return step_packet(b, i, position, QuarantinedView{}, QuarantinedLogic{}, NfSlot{});
    case DevicePacketFnKind::none:
      break;
  }
  return false;
}

}  // namespace gpunfv
