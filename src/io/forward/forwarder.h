// One `forward:` entry at run time: a loop on its own thread that moves frames from one port
// to another without an NF, zero-copy (descriptor hand-over, io/zero_copy.h) when both ports
// offer the same kind, by copying otherwise. Optional per-frame hook (routing: the chain layer
// runs the router there, config/internal/forward_config.h), sampled integrity (sampled_integrity.h), and descriptor batching: frames are
// posted to tx in groups of `descriptor_batch` (one tail update each); a partial group is
// posted when an rx poll comes back short (the queue ran dry), or after `flush_us` while full
// bursts keep coming (so batching costs latency only while traffic flows, never a stall when
// it stops).
//
// Zero-copy runs one of two loops: where neither routing nor integrity (nor the test hook) needs
// the bytes and both ports offer handle bursts (DPDK mbufs), the burst-native loop hands the
// array rx_burst filled straight to tx_burst (dpdk-testpmd io's shape, plus accounting, latency
// and descriptor batching): it reads no frame header where the ports count bytes themselves
// (checked against the lengths first) and times one rx burst in `latency_sample` (the rest go
// untimed, counted: ForwardResult::sent - latency.count()); with `count_bytes: off` it reads no
// frame header at all and marks the two ports' byte counters of its direction as not counted
// (PortCounters::rx_bytes_counted / tx_bytes_counted). Otherwise a per-frame loop, which reads
// every frame anyway, counts bytes exactly and times them all.
//
// Counting: rx, forwarded, drops and tx go into the ports' PortCounters every few dozen loop
// turns and when the loop idles or ends (the progress line sees them); drops by reason and
// latency (rx -> tx post) are kept on the forwarding thread's own stack while it runs (two
// forwards' threads never write one cache line) and land in result() when run() returns, and
// the caller merges them into the run's stats, so rx = tx + drops holds per port.
// run() calls the ports' io_thread_begin/end around the loop (DPDK: an lcore id, hence
// per-lcore mempool caches for the copy path's mbuf alloc/free).
// Host loop only: a GPU ring pair has its own forwarder (io/gpuring/forward_session.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/forward/forward_params.h"
#include "io/port.h"
#include "core/counters.h"
#include "core/latency_histogram.h"

namespace gpunfv {

struct ForwardResult {
  DropCounts drops;
  LatencyHistogram latency;   // the timed frames (all of them where latency_sample is 1)
  uint32_t latency_sample = 1;  // one rx burst in this many was timed
  uint64_t sent = 0;          // frames the target port took; sent - latency.count() went untimed
  uint64_t posts = 0;         // tx descriptor posts (tail updates)
  uint64_t copied_bytes = 0;  // bytes gpunfv copied (0 when zero-copy)
  // Where the byte counters came from: "frame lengths" (read per frame), "port counters"
  // (the ports' own, where they agree with the lengths; handle-burst loop only) or "off"
  // (count_bytes: off: not counted; the ports' PortCounters say so).
  std::string byte_counts = "frame lengths";
};

class Forwarder {
 public:
  Forwarder(const ForwardParams& spec, Port& from, Port& to, PortCounters& from_pc,
            PortCounters& to_pc);
  ~Forwarder();

  // Runs until `stop()` returns true or the source is exhausted (a file port).
  void run(const std::function<bool()>& stop);

  bool zero_copy() const { return zc_from_ != nullptr; }
  // Zero-copy by whole handle bursts (no per-frame work in the loop).
  bool handle_bursts() const;
  const ForwardResult& result() const { return result_; }
  std::string describe() const;

  // Test hook, called for every frame between its rx and its tx (a test corrupts bytes here).
  std::function<void(uint8_t* frame, uint32_t len)> between_rx_and_tx;

 private:
  struct Loop;  // what a running loop writes, on its own thread's stack
  class BurstBytes;  // byte counting of the handle-burst loop
  void run_handle_bursts(const std::function<bool()>& stop, Loop& st);
  template <class Bursts>  // how a burst moves (forward_bursts.cpp)
  void run_bursts(Bursts io, const std::function<bool()>& stop, Loop& st);
  // The same where descriptor_batch divides burst: no frame waits (kOnePost: it equals burst).
  template <bool kOnePost, class Bursts>
  void run_whole_bursts(Bursts io, const std::function<bool()>& stop, Loop& st);
  struct BurstTally;  // what run_bursts counts in locals between publishes
  template <class Bursts>  // a post the port did not take whole: retry, then free and count
  uint32_t post_refused(Bursts& io, BurstBytes& bytes, Loop& st, void* const* group, uint32_t count,
                        uint32_t sent);
  void run_zero_copy(const std::function<bool()>& stop, Loop& st);
  void run_copy(const std::function<bool()>& stop, Loop& st);
  // Routing and the rx-side checksum of one frame; false (and `why`) if it is dropped.
  bool on_rx(uint8_t* frame, uint32_t len, uint32_t& sum, DropReason& why) const;
  void publish(Loop& st);
  void idle(Loop& st);

  ForwardParams spec_;
  Port& from_;
  Port& to_;
  PortCounters& from_pc_;
  PortCounters& to_pc_;
  ZeroCopyIo* zc_from_ = nullptr;
  ZeroCopyIo* zc_to_ = nullptr;
  std::string fallback_reason_;
  ForwardResult result_;  // written when run() returns
};

}  // namespace gpunfv
