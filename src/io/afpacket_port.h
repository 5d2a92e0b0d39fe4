// `type: afpacket` port: any Linux interface through AF_PACKET sockets with mmap'ed rings.
//
//   - name: wire0
//     type: afpacket
//     interface: veth0
//     rx: true              # default true; false: a tx-only port
//     tx: true              # default true
//     queues: 2             # rx sockets in one PACKET_FANOUT_HASH group (default 1)
//     promiscuous: true     # PACKET_MR_PROMISC while the port is open (default true)
//     mtu: 1500             # set the interface MTU (SIOCSIFMTU, needs CAP_NET_ADMIN); default: keep
//     ring_blocks: 64       # rx ring per queue: blocks of block_bytes (defaults 64 x 256 KiB)
//     block_bytes: 262144
//     retire_us: 1000       # a partly filled rx block is handed over after this (default 1 ms)
//     tx_frames: 4096       # tx ring slots (default 4096)
//     tx_kick: 32           # frames written to the tx ring between send() kicks (default 32)
//
// rx: TPACKET_V3 (block ring: the kernel fills whole blocks, one poll per block, not per frame);
// `queues` sockets join one fanout group hashed on the flow (the kernel's RSS equivalent), and
// rx_burst polls them in turn. Our own transmissions are not seen (PACKET_IGNORE_OUTGOING).
// tx: a TPACKET_V2 tx ring on its own socket. V3's block layout only changes rx; for tx, V2 and
// V3 use the same frame-per-slot ring, and V2's is the one every kernel since 2.6.31 supports.
// tx() writes a slot; the ring is handed to the kernel (send()) every tx_kick frames and at
// tx_burst_end(), which is the descriptor batching of this port.
//
// Errors (ConfigError): missing interface, no permission (opening a packet socket needs
// CAP_NET_RAW, setting the MTU CAP_NET_ADMIN), ring setup refused. Zero-copy forwarding is not
// possible (the kernel copies into and out of the rings): `forward: mode: zerocopy` copies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "io/port.h"

namespace gpunfv {

class AfPacketPort final : public Port {
 public:
  AfPacketPort(const ConfigNode& node, uint16_t id);
  ~AfPacketPort() override;

  std::string_view type() const override { return "afpacket"; }
  bool has_rx() const override { return !rx_.empty(); }
  bool has_tx() const override { return tx_fd_ >= 0; }

  uint32_t rx_burst(Batch& b, uint32_t max) override;
  bool rx_done() const override { return false; }  // a live interface never ends
  // Each fanout socket is an rx queue (the kernel hashes a flow to one socket).
  uint16_t rx_queues() const override { return static_cast<uint16_t>(std::max<size_t>(1, rx_.size())); }
  uint32_t rx_queue_burst(uint16_t queue, Batch& b, uint32_t max) override;
  bool tx(const BatchView& b, uint32_t i) override;
  void tx_burst_end() override { kick(); }
  void flush() override;

  uint32_t max_frame_bytes() const override { return mtu_ + 18; }  // Ethernet + one VLAN tag
  std::string describe() const override;

  uint32_t mtu() const { return mtu_; }
  uint32_t queues() const { return uint32_t(rx_.size()); }

 private:
  struct RxQueue {
    int fd = -1;
    uint8_t* ring = nullptr;
    size_t ring_bytes = 0;
    uint32_t block = 0;     // block being read
    uint32_t left = 0;      // frames not yet read in that block
    uint8_t* next = nullptr;  // next frame header in that block
  };

  void open_rx_queue(const ConfigNode& node, RxQueue& q, int fanout_id);
  void open_tx(const ConfigNode& node);
  void kick();

  std::string ifname_;
  int ifindex_ = 0;
  uint32_t mtu_ = 1500;
  bool promiscuous_ = true;
  uint32_t ring_blocks_ = 64, block_bytes_ = 256 * 1024, retire_us_ = 1000;
  std::vector<RxQueue> rx_;
  uint32_t rx_turn_ = 0;

  int tx_fd_ = -1;
  uint8_t* tx_ring_ = nullptr;
  size_t tx_ring_bytes_ = 0;
  uint32_t tx_frames_ = 4096, tx_frame_bytes_ = 2048, tx_head_ = 0, tx_kick_ = 32;
  uint32_t tx_unkicked_ = 0;
};

}  // namespace gpunfv
