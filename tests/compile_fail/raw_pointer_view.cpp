// Must not compile: a per-packet NF whose view holds a raw pointer (core/iso_view.h).
#include "nf/per_packet_nf.h"

namespace gpunfv {

struct LeakyView {
  const uint8_t* table;  // not an IsoSpan: its kernel could read anywhere
};
struct LeakyLogic {
  GPUNFV_HD NfVerdict operator()(const LeakyView& v, PacketRef p) const { return DropReason::none; }
};
class Leaky final : public PerPacketNf<Leaky, LeakyView, LeakyLogic> {
 public:
  using PerPacketNf::PerPacketNf;
  std::string_view type() const override { return "leaky"; }
  std::string describe() const override { return "leaky"; }
  LeakyView view(Backend) const { return {nullptr}; }
};
Leaky leaky("x");

}  // namespace gpunfv
