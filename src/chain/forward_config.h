// The `forward:` section: port-to-port forwarding without an NF (P2PNIC).
//
//   forward:
//     - from: nic0
//       to: nic1
//       mode: zerocopy          # zerocopy (default) | copy
//       route: routes/fwd.routes        # optional: the router's `routes:` forms, file or
//                                       # {file: prefixes.txt, spread: [nic1]}; every next hop
//                                       # must be `to`. TTL and checksum as the router does.
//       descriptor_batch: 8     # frames per tx descriptor post (tail update); default 8
//       flush_us: 20            # a partial group waits at most this long (default 20) while
//                               # full bursts keep coming; a short rx poll posts it at once
//       burst: 32               # frames per rx poll (default 32)
//       integrity: on           # sampled checksum rx -> tx (default off)
//       latency_sample: 64      # time one rx burst in this many (default 64; 1: every frame).
//                               # Only the burst-native zero-copy loop samples; the per-frame
//                               # loops (route, integrity, copy) time every frame. The report
//                               # gives the frames timed and those sent untimed.
//       count_bytes: exact      # exact (default) | off. exact: rx/tx bytes counted exactly (the
//                               # ports' own counters where they agree, else each frame's
//                               # length read at rx); off: the bytes of this forward are not
//                               # counted (the report says so: null, never a made-up number) and
//                               # the loop reads no frame at all, as dpdk-testpmd io. off only
//                               # for a plain zero-copy forward (no route, no integrity).
//       variant: wr             # only between two gpuring ports: wr | rd | bn (default rd),
//                               # see io/gpuring/forward_rings.h
//
// Between two gpuring ports the forward runs on their rings (chain/gpuring_forward.h): both
// ports need the same ring shape (rings, ring_size, slot_bytes, slots_per_ring, tail_batch,
// tail_timeout_ns, tx_writeback) and placement; descriptor batching is the ports' tail_batch
// and tail_timeout_ns, so descriptor_batch, flush_us, burst, latency_sample and mode: copy do
// not apply there.
// A gpuring port forwards only to and from another gpuring port.
//
// A port is the `from` of at most one forward and then feeds no chain; the `to` of a forward
// is the egress of nothing else (tx is single-threaded per port).
// Errors: ConfigError naming file:line (unknown ports, sides missing, bad values, routes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "io/port.h"
#include "nf/router/route_file.h"

namespace gpunfv {

class Router;

enum class ForwardMode : uint8_t { zerocopy, copy };
// Byte counting of a forward (`count_bytes:`): exact, or off (not counted, reported as such).
enum class ByteCounting : uint8_t { exact, off };

// The largest `burst:` (frames per rx poll); a forward loop's burst array is this long.
constexpr uint32_t kMaxForwardBurst = 256;

struct ForwardSpec {
  std::string name;  // "from=>to"
  uint16_t from = 0, to = 0;
  ForwardMode mode = ForwardMode::zerocopy;
  std::shared_ptr<const Router> route;  // null: no routing
  uint32_t descriptor_batch = 8;
  uint32_t flush_us = 20;
  uint32_t burst = 32;
  // One rx burst in this many is timed (burst-native loop). 64: the two TSC reads of a timed
  // burst were about 6% of a one-core loop's time at 16 (bench/probes/pc_sampler.c on the H200
  // host), about 1.5% at 64, and 64 still times some 100,000 bursts a second at 200 Mpps.
  uint32_t latency_sample = 64;
  bool integrity = false;
  ByteCounting count_bytes = ByteCounting::exact;
  std::string gpu_variant;  // `variant:` (gpuring -> gpuring only); empty: not given
  bool on_rings = false;    // between two gpuring ports: runs on their rings
};

// Parses `forward:` (a sequence). `ports` are the built ports, index = id.
std::vector<ForwardSpec> parse_forwards(const ConfigNode& list, const PortIdOf& port_id_of,
                                        const std::vector<std::unique_ptr<Port>>& ports);

}  // namespace gpunfv
