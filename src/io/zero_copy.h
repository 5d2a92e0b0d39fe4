// Zero-copy frame hand-over between two ports of the same kind (P2PNIC's descriptor hand-over):
// the buffer a frame was received into is the buffer it is sent from. A port that can do it
// returns a ZeroCopyIo from Port::zero_copy(); `forward:` with mode zerocopy uses it when both
// ends return one of the same kind (zc_kind), and falls back to copying otherwise.
//
// Kinds: "dpdk-mbuf" (rte_mbuf pointers: rx_burst on one port, tx_burst on the other; any two
// DPDK ports qualify), "afxdp-umem:..." (UMEM addresses, two sockets sharing a UMEM). GPU ring
// ports forward on their own rings (io/gpuring/forward_*.h); this interface is for
// host-visible buffers.
//
// Two ways to move frames: FrameRef per frame (data, length, handle), for forwards that look at
// the bytes (routing, integrity); and, where a handle alone names a whole frame (an rte_mbuf
// carries its length), handle bursts: the array rx filled is the array tx takes, with no
// per-frame conversion, as dpdk-testpmd's io mode does.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpunfv {

// One received frame, in place. `handle` is the port's own token for the buffer
// (an rte_mbuf*); only ports of the same zc_kind understand each other's handles.
struct FrameRef {
  uint8_t* data = nullptr;
  uint32_t len = 0;
  uint64_t wire_ns = 0;
  uintptr_t handle = 0;
};

class ZeroCopyIo {
 public:
  virtual ~ZeroCopyIo() = default;
  virtual std::string_view zc_kind() const = 0;
  // Up to `max` received frames, in place; the caller owns them until it sends or frees them.
  virtual uint32_t zc_rx(FrameRef* out, uint32_t max) = 0;
  // Posts frames[0..n) for transmission, in order; returns how many were taken (the port owns
  // them from then on). The caller retries or frees the rest.
  virtual uint32_t zc_tx(const FrameRef* frames, uint32_t n) = 0;
  // Returns frames that will not be sent (drops) to their pool.
  virtual void zc_free(const FrameRef* frames, uint32_t n) = 0;

  // Handle bursts, offered where zc_handle_bursts() is true (both ends of a forward must offer
  // them). zc_rx_handles: up to `max` received frames as opaque handles; where `bytes` is not
  // null it gets their total length (reading every frame's header; null: none is read).
  // zc_tx_handles: posts handles[0..n) in order and returns how many were taken (the port owns
  // them from then on). zc_handle_bytes: total length of frames still the caller's.
  // zc_free_handles: returns frames that will not be sent to their pool.
  virtual bool zc_handle_bursts() const { return false; }
  virtual uint32_t zc_rx_handles(void** handles, uint32_t max, uint64_t* bytes) {
    if (bytes) *bytes = 0;
    return 0;
  }
  virtual uint32_t zc_tx_handles(void* const* handles, uint32_t n) { return 0; }
  virtual uint64_t zc_handle_bytes(void* const* handles, uint32_t n) const { return 0; }
  virtual void zc_free_handles(void* const* handles, uint32_t n) {}
  // The DPDK ethdev port whose queue 0 these handle bursts use (zc_rx_handles is
  // rte_eth_rx_burst there, zc_tx_handles rte_eth_tx_burst), or -1: a forward between two such
  // ports calls DPDK's inline burst functions itself instead of two virtual calls a burst.
  virtual int zc_ethdev_port() const { return -1; }
  // Byte totals the port keeps itself (DPDK: the ethdev's ibytes / obytes since it started), so
  // a forward need not read every frame's length; false where the port has none. Whether they
  // count exactly the frames rx returned and tx took (a software PMD does; a NIC may count
  // frames not yet polled, or the CRC) is for the caller to check (Forwarder calibrates).
  virtual bool zc_port_bytes(uint64_t& rx, uint64_t& tx) {
    rx = tx = 0;
    return false;
  }
};

}  // namespace gpunfv
