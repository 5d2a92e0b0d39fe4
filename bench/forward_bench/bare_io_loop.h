// dpdk-testpmd io's forwarding loop and nothing else, built into forward_bench: on our ports,
// with our statically linked DPDK, on our threads. Its rows (--bare-loop) tell what our
// forward's own bookkeeping costs (per-port and per-post counts, the stop check, the latency
// sample, descriptor batching) apart from everything around it that testpmd does differently
// (its shared DPDK libraries, its process, its memory).
#pragma once

#include <atomic>
#include <cstdint>

namespace gpunfv::bench {

// Moves bursts of up to 32 frames from ethdev `in` (queue 0) to `out` (queue 0) until `stop`:
// rx burst, tx burst, free what tx refused, as testpmd's io mode (without its stats). Adds the
// frames sent to `sent` every 256 bursts and at the end. Without DPDK in the build: returns.
void bare_io_loop(uint16_t in, uint16_t out, const std::atomic<bool>& stop, std::atomic<uint64_t>& sent);

}  // namespace gpunfv::bench
