// The shape every batch of a run has: packets per batch, slot size (largest frame any port
// delivers plus the largest NF headroom, in 64-byte steps) and the per-packet results record
// (one slice per NF that keeps results; plan_batch_shape assigns the NFs their offsets).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "chain/runtime_config.h"

namespace gpunfv {

struct BatchShape {
  uint32_t capacity = 0;
  uint32_t stride = 0;
  uint32_t result_stride = 0;
};

BatchShape plan_batch_shape(RuntimeConfig& rc);

// Bytes `batches` batches of `shape` take (the pool a run allocates at start).
uint64_t pool_bytes(const BatchShape& shape, uint32_t batches);

// The machine's physical memory in bytes; 0 when the system does not say.
uint64_t physical_memory_bytes();

// Why a pool of settings.batches batches of `shape` cannot be allocated: it is larger than
// settings.max_pool_memory_percent of `physical_bytes` (which 0 leaves unchecked). nullopt: it fits.
std::optional<std::string> pool_too_large(const BatchShape& shape, const Settings& settings,
                                          uint64_t physical_bytes);

}  // namespace gpunfv
