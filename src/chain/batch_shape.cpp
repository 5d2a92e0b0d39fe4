#include "chain/batch_shape.h"

#include <unistd.h>

#include <algorithm>

#include "core/batch.h"

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

uint64_t pool_bytes(const BatchShape& shape, uint32_t batches) {
  return uint64_t(BatchLayout::make(shape.capacity, shape.stride, shape.result_stride).bytes) *
         batches;
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

std::optional<std::string> pool_too_large(const BatchShape& shape, const Settings& settings,
                                          uint64_t physical_bytes) {
  const uint64_t bytes = pool_bytes(shape, settings.batches);
  const uint64_t limit = physical_bytes / 100 * settings.max_pool_memory_percent;
  if (physical_bytes == 0 || bytes <= limit) return std::nullopt;
  // GiB past 10 GiB: a pool of 65536 batches of 1Mi packets reads 23297 GiB, not 23855120 MiB.
  auto mib = [](uint64_t b) {
    return b >= (uint64_t(10) << 30) ? std::to_string((b + (1 << 30) - 1) >> 30) + " GiB"
                                     : std::to_string((b + (1 << 20) - 1) >> 20) + " MiB";
  };
  return "the batch pool (" + std::to_string(settings.batches) + " batches of " +
         std::to_string(shape.capacity) + " packets, " + std::to_string(shape.stride) +
         "-byte slots) takes " + mib(bytes) + ", more than max_pool_memory_percent (" +
         std::to_string(settings.max_pool_memory_percent) + "%) of this machine's " +
         mib(physical_bytes) + ": " + mib(limit) + "; lower batches or batch_size";
}

}  // namespace gpunfv
