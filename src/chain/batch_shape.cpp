#include "chain/batch_shape.h"

#include <algorithm>

namespace gpunfv {

BatchShape plan_batch_shape(RuntimeConfig& rc) {
  BatchShape s;
  s.capacity = rc.settings.batch_size;
  for (auto& nf : rc.nfs) {
    nf->set_result_offset(s.result_stride);
    s.result_stride += (nf->result_bytes() + 3) / 4 * 4;
  }
  // A packet may cross every NF of its chain, each growing it (tunnels in tunnels).
  uint32_t headroom = 0;
  for (const Chain& c : rc.chains) {
    uint32_t grow = 0;
    for (uint16_t nf : c.path) grow += rc.nfs[nf]->headroom_bytes();
    headroom = std::max(headroom, grow);
  }
  if (rc.settings.slot_bytes) {
    s.stride = rc.settings.slot_bytes;
  } else {
    uint32_t largest = 64;
    for (const auto& p : rc.ports)
      if (p->has_rx()) largest = std::max(largest, p->max_frame_bytes());
    // Jumbo frames at most: larger ones are dropped as `oversize` unless slot_bytes says more.
    largest = std::min<uint32_t>(largest, 9216) + headroom;
    s.stride = (largest + 63) / 64 * 64;
  }
  return s;
}

}  // namespace gpunfv
