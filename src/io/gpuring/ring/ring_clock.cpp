#include "io/gpuring/ring/ring_clock.h"

#include <time.h>

#include <stdexcept>

namespace gpunfv::gpuring {

namespace {
int64_t now_ns(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

RingClockOffsets host_ring_clock_offsets() {
  // REALTIME - MONOTONIC, read between two MONOTONIC readings to halve the gap.
  const int64_t a = now_ns(CLOCK_MONOTONIC), r = now_ns(CLOCK_REALTIME), b = now_ns(CLOCK_MONOTONIC);
  RingClockOffsets o;
  o.to_monotonic_ns = 0;
  o.to_unix_ns = r - (a + (b - a) / 2);
  return o;
}

#if !GPUNFV_HAVE_CUDA
RingClockOffsets measure_device_ring_clock() {
  throw std::runtime_error("gpuring: the device ring clock needs a build with CUDA");
}
#endif

}  // namespace gpunfv::gpuring
