// stray_write, a deliberately faulty NF plugin for the isolation tests: for IPv4 packets whose
// TTL is below `ttl_below` it writes a byte past the end of its packet's slot, into what would
// be the next packet's bytes; other packets pass untouched. gpunfv must refuse the write, drop
// the packet as nf_isolation_fault, quarantine the NF and keep every other chain running.
//
//   - {name: stray, type: plugin, library: libstray_write.so, ttl_below: 128}
#include <memory>
#include <string>

#include "nf/per_packet_nf.h"

namespace stray_write {

using namespace gpunfv;

struct StrayWriteView {
  uint16_t ttl_below;
};

struct StrayWriteLogic {
  GPUNFV_HD NfVerdict operator()(const StrayWriteView& v, PacketRef p) const {
    const PacketHeaders& h = p.headers();
    if (h.ip_version != 4 || p.frame()[h.l3_off + 8] >= v.ttl_below) return DropReason::none;
    IsoSpan<uint8_t> slot = p.slot();
    slot[slot.size() + 16] = 0xA5;  // past the slot: refused
    return DropReason::none;
  }
};

class StrayWrite final : public PerPacketNf<StrayWrite, StrayWriteView, StrayWriteLogic> {
 public:
  StrayWrite(std::string name, StrayWriteView v) : PerPacketNf(std::move(name)), view_(v) {}

  static std::unique_ptr<StrayWrite> from_config(const ConfigNode& node) {
    node.only_keys({"name", "type", "ttl_below"});
    return std::make_unique<StrayWrite>(node.str("name"),
                                        StrayWriteView{uint16_t(node.int_or("ttl_below", 128, 0, 256))});
  }
  std::string_view type() const override { return "stray_write"; }
  std::string describe() const override {
    return "stray_write " + name() + ": writes past its slot for IPv4 TTL below " +
           std::to_string(view_.ttl_below);
  }
  StrayWriteView view(Backend) const { return view_; }

 private:
  StrayWriteView view_;
};

GPUNFV_PER_PACKET_NF("stray_write", StrayWrite);

}  // namespace stray_write
