#include "chain/batch_shape.h"

#include <algorithm>

namespace gpunfv {

BatchShape plan_batch_shape(RuntimeConfig& rc) {
  BatchShape s;
  s.capacity = rc.settings.batch_size;
  uint32_t headroom = 0;
  for (auto& nf : rc.nfs) {
    headroom = std::max(headroom, nf->headroom_bytes());
    nf->set_result_offset(s.result_stride);
    s.result_stride += (nf->result_bytes() + 3) / 4 * 4;
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
