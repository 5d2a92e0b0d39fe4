// Must not compile: a per-packet NF whose view holds the whole batch (core/iso_view.h).
#include "nf/per_packet_nf.h"

namespace gpunfv {

struct GreedyView {
  uint32_t offset;
  BatchView batch;  // every packet's bytes, verdicts and results, not only this NF's
};
struct GreedyLogic {
  GPUNFV_HD NfVerdict operator()(const GreedyView& v, PacketRef p) const { return DropReason::none; }
};
class Greedy final : public PerPacketNf<Greedy, GreedyView, GreedyLogic> {
 public:
  using PerPacketNf::PerPacketNf;
  std::string_view type() const override { return "greedy"; }
  std::string describe() const override { return "greedy"; }
  GreedyView view(Backend) const { return {}; }
};
Greedy greedy("x");

}  // namespace gpunfv
