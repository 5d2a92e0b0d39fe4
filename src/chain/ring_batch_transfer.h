// What crosses PCIe for a device-resident batch (a GPU ring's batch on the GPU backend: its
// metadata in device memory, its packets in the ring's slots, chain/gpuring_feed.h), decided
// here as plain functions so `make test` checks them without a GPU:
//   - upload before the chain: nothing. The rx loop wrote len, port, seq, rx_ns, wire_ns and
//     slot_index in device memory; classify writes the rest; node_packets is zeroed on the
//     device. (A host batch uploads its whole device prefix, packet bytes included.)
//   - download after the chain: metadata only (metadata_download_ranges): every array in front
//     of the layout's data area (len, port, node_packets, out_port, next_nf, visited, verdict,
//     headers, flow_hash, NF results) and seq, rx_ns, wire_ns behind it; never packet bytes.
//   - frames egress needs on the host (frames_needed_on_host): those of packets sent to a host
//     port, and those of packets whose frame an NF's collect() reads (NIDS alert logs: the
//     alerted packets);
//     egress copies just these out of their slots. Packets sent back to the ring stay put.
//   - upload after egress: the verdict array (egress marks packets it sent itself or dropped,
//     so the ring's tx loop frees their slots instead of sending them).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "chain/runtime_config.h"
#include "core/batch.h"

namespace gpunfv {

struct ByteRange {
  size_t offset = 0, bytes = 0;
};

// The two ranges of a batch allocation in `l` the host reads after the chain, in order.
std::array<ByteRange, 2> metadata_download_ranges(const BatchLayout& l);
inline size_t metadata_download_bytes(const BatchLayout& l) {
  size_t n = 0;
  for (const ByteRange& r : metadata_download_ranges(l)) n += r.bytes;
  return n;
}
// The range egress writes back before the batch returns to its ring.
inline ByteRange verdict_upload_range(const BatchLayout& l, uint32_t count) {
  return {l.off_verdict, count};
}

// Indices of the packets of a finished batch (its downloaded metadata in `b`) whose bytes egress
// needs on the host, in packet order, into `out` (cleared first). A live packet needs them when
// its egress port (out_port, else chain.to) is a port other than `ring_port` below
// `port_count`; any packet needs them when it reached a node k whose bit is set in
// `frame_nodes` (nodes whose NF's collect() reads frames) and `reads(k, i)` says that NF's
// collect() reads this packet's frame (NIDS: only alerted packets).
using CollectReadsFrame = std::function<bool(uint8_t node, uint32_t packet)>;
void frames_needed_on_host(const BatchView& b, const Chain& chain, uint16_t ring_port,
                           size_t port_count, uint32_t frame_nodes, const CollectReadsFrame& reads,
                           std::vector<uint32_t>& out);

}  // namespace gpunfv
