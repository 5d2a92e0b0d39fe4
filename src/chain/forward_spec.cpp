#include "chain/forward_spec.h"

#include "nf/router/router.h"

namespace gpunfv {

namespace {

// Runs the router's per-packet logic on one frame in place, through a one-packet batch view
// over the frame's own buffer (an mbuf, a UMEM frame or a batch slot).
DropReason route_frame(const RouterView& rv, uint8_t first_drop, uint8_t* frame, uint32_t len) {
  PacketHeaders h{};
  IsoSpan<uint8_t> data(frame, len);
  DropReason r = parse_headers(IsoSpan<const uint8_t>(frame, len), h);
  if (r != DropReason::none) return r;
  uint16_t len16 = uint16_t(len), out = kNoPort, port = 0;
  BatchView v{};
  v.count = v.capacity = 1;
  v.stride = len;
  v.data = data;
  v.len = IsoSpan<uint16_t>(&len16, 1);
  v.port = IsoSpan<uint16_t>(&port, 1);
  v.out_port = IsoSpan<uint16_t>(&out, 1);
  v.headers = IsoSpan<PacketHeaders>(&h, 1);
  return DropReason(RouterLogic{}(rv, PacketRef(v, 0)).code(first_drop));
}

}  // namespace

FrameHook route_hook(std::shared_ptr<const Router> route) {
  // The forward's Router outlives the run (the spec holds it); the view reads its host tables.
  const uint8_t first_drop = first_drop_code<RouterDrop>();
  return [route, first_drop](uint8_t* frame, uint32_t len) {
    return route_frame(route->host_view(), first_drop, frame, len);
  };
}

}  // namespace gpunfv
