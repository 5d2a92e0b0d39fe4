// dscp_mark, an NF plugin: re-marks the DSCP of IPv4 packets (RFC 2474) to `dscp`, keeping the
// ECN bits and updating the header checksum incrementally (RFC 1624), as a network's trust
// boundary re-marks what its customers send. Packets that arrive marked `drop_dscp` are dropped
// as dscp_dropped. Other frames pass.
//
//   - {name: mark, type: plugin, library: libdscp_mark.so, dscp: 10, drop_dscp: 46}
#include <memory>
#include <string>

#include "core/internet_checksum.h"
#include "core/parse.h"
#include "nf/per_packet_nf.h"

namespace dscp_mark {

using namespace gpunfv;

#define DSCP_MARK_DROPS(X) X(dscp_dropped, "arrived with the DSCP that dscp_mark drops")
GPUNFV_NF_DROP_REASONS(DscpMarkDrop, "dscp_mark", DSCP_MARK_DROPS);

struct DscpMarkView {
  uint8_t dscp;
  int16_t drop_dscp;  // -1: none
};

struct DscpMarkLogic {
  using Drops = DscpMarkDrop;
  GPUNFV_HD NfVerdict operator()(const DscpMarkView& v, PacketRef p) const {
    const PacketHeaders& h = p.headers();
    if (h.ip_version != 4) return DropReason::none;
    IsoSpan<uint8_t> f = p.frame();
    const uint32_t ip = h.l3_off;
    if (f[ip + 1] >> 2 == v.drop_dscp) return DscpMarkDrop::dscp_dropped;
    // The TOS byte shares its 16-bit checksum word with version and IHL.
    const uint16_t old_word = load_be16(f, ip);
    const uint16_t new_word = uint16_t((old_word & 0xFF03u) | uint16_t(v.dscp) << 2);
    store_be16(f, ip, new_word);
    store_be16(f, ip + 10, ipv4_checksum::update(load_be16(f, ip + 10), old_word, new_word));
    return DropReason::none;
  }
};

class DscpMark final : public PerPacketNf<DscpMark, DscpMarkView, DscpMarkLogic> {
 public:
  DscpMark(std::string name, DscpMarkView v) : PerPacketNf(std::move(name)), view_(v) {}

  static std::unique_ptr<DscpMark> from_config(const ConfigNode& node) {
    node.only_keys({"name", "type", "dscp", "drop_dscp"});
    const DscpMarkView v{uint8_t(node.int_or("dscp", 0, 0, 63)),
                         int16_t(node.int_or("drop_dscp", -1, -1, 63))};
    return std::make_unique<DscpMark>(node.str("name"), v);
  }
  std::string_view type() const override { return "dscp_mark"; }
  std::string describe() const override {
    return "dscp_mark " + name() + ": marks IPv4 packets DSCP " + std::to_string(view_.dscp) +
           (view_.drop_dscp < 0 ? "" : ", drops those marked " + std::to_string(view_.drop_dscp));
  }
  DscpMarkView view(Backend) const { return view_; }

 private:
  DscpMarkView view_;
};

GPUNFV_PER_PACKET_NF("dscp_mark", DscpMark);

}  // namespace dscp_mark
