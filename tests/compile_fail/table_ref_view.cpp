// Must compile: the control for the files beside it, with views of plain values, IsoSpans and
// the built-in NFs' table refs (core/iso_view.h).
#include "nf/firewall/firewall_logic.h"
#include "nf/per_packet_nf.h"
#include "nf/router/router_logic.h"

namespace gpunfv {

struct TablesView {
  RouterView router;
  FirewallView firewall;
  IsoSpan<const uint16_t> ports;
  uint8_t min_ttl;
};
struct TablesLogic {
  GPUNFV_HD NfVerdict operator()(const TablesView& v, PacketRef p) const { return DropReason::none; }
};
class Tables final : public PerPacketNf<Tables, TablesView, TablesLogic> {
 public:
  using PerPacketNf::PerPacketNf;
  std::string_view type() const override { return "tables"; }
  std::string describe() const override { return "tables"; }
  TablesView view(Backend) const { return {}; }
};
Tables tables("x");

}  // namespace gpunfv
