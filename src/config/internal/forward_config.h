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
//                               # see io/gpuring/loops/forward_rings.h
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

#include <memory>
#include <vector>

#include "chain/forward_spec.h"
#include "core/config_node.h"
#include "io/port.h"
#include "nf/router/route_file.h"

namespace gpunfv {

// Parses `forward:` (a sequence). `ports` are the built ports, index = id.
std::vector<ForwardSpec> parse_forwards(const ConfigNode& list, const PortIdOf& port_id_of,
                                        const std::vector<std::unique_ptr<Port>>& ports);

}  // namespace gpunfv
