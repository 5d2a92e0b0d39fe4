// Ports: where packets enter and leave gpunfv. A port has an rx side (a source of frames),
// a tx side (a sink), or both. Ports are driven by the executor's I/O threads: rx on one rx
// queue is never called concurrently (different queues may be polled by different threads at
// once), and tx is never called concurrently unless tx_thread_safe() says it may be.
//
// Errors: constructors throw ConfigError (bad keys, missing files); rx/tx never throw on bad
// packets: an oversized frame is delivered with its true length and dropped later as
// `oversize`; a frame that cannot be written is counted by the caller as `port_tx_error`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch.h"
#include "io/zero_copy.h"

namespace gpunfv {

class Port {
 public:
  Port(std::string name, uint16_t id) : name_(std::move(name)), id_(id) {}
  virtual ~Port() = default;
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  const std::string& name() const { return name_; }
  uint16_t id() const { return id_; }
  virtual std::string_view type() const = 0;
  virtual bool has_rx() const = 0;
  virtual bool has_tx() const = 0;

  // Appends up to `max` frames to `b` starting at slot b.count(): copies min(len, stride)
  // bytes into the slot and sets len, port (this port's id), wire_ns; then raises b.count().
  // Returns how many were appended; 0 with rx_done() true means the source is exhausted;
  // 0 otherwise means nothing is ready yet (pacing).
  virtual uint32_t rx_burst(Batch& b, uint32_t max) = 0;
  virtual bool rx_done() const = 0;
  // Frames that reached a live source since the last call but were lost in its receive queue
  // because nobody took them in time (a NIC ring overflowing). File and on-demand sources
  // wait instead and return 0.
  virtual uint64_t take_rx_drops() { return 0; }

  // Several rx queues (as a NIC's RSS queues): each flow arrives on one queue only, so one
  // thread per queue keeps every flow in order. The queue-less calls above poll all queues in
  // turn; the calls below take one queue, in [0, rx_queues()). Named apart from rx_burst so a
  // port that overrides one does not hide the other.
  virtual uint16_t rx_queues() const { return 1; }
  virtual uint32_t rx_queue_burst(uint16_t queue, Batch& b, uint32_t max) { return rx_burst(b, max); }
  virtual bool rx_queue_done(uint16_t queue) const { return rx_done(); }
  virtual uint64_t take_rx_queue_drops(uint16_t queue) { return take_rx_drops(); }

  // Sends frame i of `b` (len[i] bytes, timestamp wire_ns[i]). False if it could not be sent.
  virtual bool tx(const BatchView& b, uint32_t i) = 0;
  // Sends frames idx[0..n) of `b` in that order, as n tx() calls would; ok[k] says whether
  // frame idx[k] was sent; returns how many were. The executor makes one such call per port and
  // batch: a port whose frames cost next to nothing (discard) saves a virtual call per frame.
  virtual uint32_t tx_list(const BatchView& b, const uint32_t* idx, uint32_t n, uint8_t* ok) {
    uint32_t sent = 0;
    for (uint32_t k = 0; k < n; ++k) sent += ok[k] = tx(b, idx[k]) ? 1 : 0;
    return sent;
  }
  virtual void flush() {}
  // End of a run of tx() calls (one batch): ports that queue descriptors post them now.
  virtual void tx_burst_end() {}
  // True if tx/tx_burst_end may be called from several threads at once (the executor then
  // takes no lock around them); false: the executor serializes each port's tx.
  virtual bool tx_thread_safe() const { return false; }
  // A thread that will drive this port calls io_thread_begin() first and io_thread_end() when
  // done (pairs may nest; both on that thread). DPDK ports register the thread with EAL here.
  virtual void io_thread_begin() {}
  virtual void io_thread_end() {}
  // Zero-copy frame hand-over for `forward:` (io/zero_copy.h); nullptr if the port cannot.
  virtual ZeroCopyIo* zero_copy() { return nullptr; }

  // Largest frame rx will deliver, so the executor can size batch slots.
  virtual uint32_t max_frame_bytes() const { return 1518; }

  // One line for the startup summary ("pcap rx=trace.pcap tx=out.pcap").
  virtual std::string describe() const = 0;

 private:
  std::string name_;
  uint16_t id_;
};

}  // namespace gpunfv
