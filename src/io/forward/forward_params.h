// What a host forward loop (forwarder.h) runs by: the parameters of one `forward:` entry
// (config/internal/forward_config.h parses them and documents each) and the per-frame hook a routed
// forward runs. The loop knows nothing of what the hook does; the chain layer builds it (a
// forward's `route:` runs the router's own per-packet logic).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/drop_reason.h"

namespace gpunfv {

enum class ForwardMode : uint8_t { zerocopy, copy };
// Byte counting of a forward (`count_bytes:`): exact, or off (not counted, reported as such).
enum class ByteCounting : uint8_t { exact, off };

// The largest `burst:` (frames per rx poll); a forward loop's burst array is this long.
constexpr uint32_t kMaxForwardBurst = 256;

// Runs on each frame in place between rx and tx: DropReason::none forwards it, any other reason
// drops it (counted).
using FrameHook = std::function<DropReason(uint8_t* frame, uint32_t len)>;

struct ForwardParams {
  std::string name;  // "from=>to"
  uint16_t from = 0, to = 0;
  ForwardMode mode = ForwardMode::zerocopy;
  FrameHook hook;  // empty: none (no routing)
  uint32_t descriptor_batch = 8;
  uint32_t flush_us = 20;
  uint32_t burst = 32;
  // One rx burst in this many is timed (burst-native loop). 64: the two TSC reads of a timed
  // burst were about 6% of a one-core loop's time at 16 (bench/probes/pc_sampler.c on the H200
  // host), about 1.5% at 64, and 64 still times some 100,000 bursts a second at 200 Mpps.
  uint32_t latency_sample = 64;
  bool integrity = false;
  ByteCounting count_bytes = ByteCounting::exact;
};

}  // namespace gpunfv
