// How a ring's clock (ring_now_ns: the GPU's %globaltimer with placement: device,
// CLOCK_MONOTONIC with placement: host) maps to the host's clocks, so the timestamps the rx
// loop writes into a batch are on them: rx_ns on CLOCK_MONOTONIC (egress measures latency
// against it) and wire_ns on CLOCK_REALTIME (the capture time a pcap sink writes; descriptors
// carry none, so it is when the rx loop took the packet, as a software rx timestamp).
//
// The device offsets are measured once, before the ring kernel starts, NTP-style: the host
// writes a request word in mapped memory, a one-thread kernel answers with its globaltimer, and
// of many round trips the shortest is kept (the GPU's reading lies inside it): the error is at
// most half that round trip (a few microseconds over PCIe, reported as uncertainty_ns) plus the
// two clocks' drift over the run, and the resolution is globaltimer's.
//
// Errors: measure_device_ring_clock throws GpuError on CUDA failures and std::runtime_error when
// the probe kernel does not answer within a second, or in a build without CUDA.
#pragma once

#include <cstdint>

namespace gpunfv::gpuring {

struct RingClockOffsets {
  int64_t to_monotonic_ns = 0;  // ring clock + this = CLOCK_MONOTONIC
  int64_t to_unix_ns = 0;       // ring clock + this = CLOCK_REALTIME
  uint64_t uncertainty_ns = 0;  // half the shortest round trip (0 on the host)
};

// placement: host: the ring clock is CLOCK_MONOTONIC.
RingClockOffsets host_ring_clock_offsets();
// placement: device: %globaltimer against the host's clocks (launches a short kernel: call it
// before any persistent kernel runs).
RingClockOffsets measure_device_ring_clock();

}  // namespace gpunfv::gpuring
