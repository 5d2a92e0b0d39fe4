// The shape every batch of a run has: packets per batch, slot size (largest frame any port
// delivers plus the largest NF headroom, in 64-byte steps) and the per-packet results record
// (one slice per NF that keeps results; plan_batch_shape assigns the NFs their offsets).
#pragma once

#include <cstdint>

#include "chain/runtime_config.h"

namespace gpunfv {

struct BatchShape {
  uint32_t capacity = 0;
  uint32_t stride = 0;
  uint32_t result_stride = 0;
};

BatchShape plan_batch_shape(RuntimeConfig& rc);

}  // namespace gpunfv
