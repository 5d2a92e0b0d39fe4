// NicEmulator: an EMULATED Intel 82599, one host thread per port, for machines without a NIC
// that can DMA into GPU memory. It plays the NIC's part of the descriptor-ring protocol:
//   rx: takes frames from a source Port (pcap, generator) at a set rate, picks a ring by RSS
//       (Toeplitz hash, redirection table), fetches rx descriptors the driver handed over (those
//       in [RDH, RDT), RDT read from the mapped "BAR" word the GPU writes), copies each frame
//       into the buffer its descriptor names with the DMA engine (the GPU's copy engine), then
//       writes the descriptor back (length, RSS hash, DD|EOP). No free descriptor: the frame is
//       dropped and counted (nic_rx_ring_full), as the 82599 does (RNBC/missed packets), or
//       held until one is free when flow control is on;
//   tx: reads TDT, fetches the descriptors in [TDH, TDT), copies each frame out to host memory,
//       hands it to the sink Port, writes DD back into descriptors with RS set, then advances
//       TDH (the register the driver reads when write-back is off).
// It also measures what a tester around a device under test measures: latency from taking a
// frame to sending it, reordering (against the global arrival order, and within each ring).
//
// Errors: the constructor throws std::invalid_argument on a source without rx. A GpuError in
// the thread is kept and rethrown by join().
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "core/batch.h"
#include "io/gpuring/dma_engine.h"
#include "io/gpuring/ring_set.h"
#include "io/gpuring/toeplitz.h"
#include "io/port.h"

namespace gpunfv::gpuring {

struct NicEmulatorConfig {
  double rate_pps = 0;   // offered rate; 0 = as fast as the source and the copy engine allow
  uint32_t burst = 32;   // frames taken from the source per step
  uint64_t max_latency_samples = 1u << 24;
  // 802.3x flow control: with the ring full, hold the frame (the link is paused) instead of
  // dropping it. Off by default, as in the papers' measurements; tests use it for exact counts.
  bool flow_control = false;
  uint32_t tx_burst = 64;     // tx descriptors fetched per step and ring
  // Time each phase of the emulator's steps (NicStats::phases); two clock reads per phase.
  bool phase_timing = false;
  // Do not wait for an rx step's copies at its end but at the start of the next rx step (or
  // when the source runs dry): the tx step's synchronous reads in between, on the same ordered
  // queue, usually complete them, so a loop turn pays one synchronization fewer. The frames
  // reach the rings as early either way; only RDH is published later. Off: the old behaviour.
  bool defer_rx_wait = false;
};

// Where the emulator's time goes (NicEmulatorConfig::phase_timing), summed over its steps. The
// copy phases include the stream synchronization that ends them.
struct NicPhaseTimes {
  uint64_t rx_steps = 0, rx_frames = 0, rx_desc_fetches = 0;
  uint64_t rx_source_ns = 0;      // taking frames from the source port
  uint64_t rx_desc_fetch_ns = 0;  // reading newly armed rx descriptors (a synchronous read each)
  uint64_t rx_copy_ns = 0;        // frames into the slots + descriptor write-backs + wait
  uint64_t tx_steps = 0, tx_frames = 0;
  uint64_t tx_desc_read_ns = 0;   // reading posted tx descriptors (synchronous)
  uint64_t tx_copy_ns = 0;        // frames out of the slots + wait
  uint64_t tx_sink_ns = 0;        // latency bookkeeping and handing frames to the sink
  uint64_t tx_writeback_ns = 0;   // issuing the DD write-backs (not waited for)
};

struct NicStats {
  uint64_t offered = 0;            // frames taken from the source
  uint64_t delivered = 0;          // written into an rx ring
  uint64_t drops_ring_full = 0;    // nic_rx_ring_full
  uint64_t drops_oversize = 0;     // longer than a slot (the 82599 would count ROC)
  uint64_t pauses = 0;             // flow control: steps that found the ring full and waited
  uint64_t tx_packets = 0, tx_bytes = 0, tx_errors = 0;  // tx_errors: the sink refused
  uint64_t reordered = 0;          // sent after a frame that arrived later (any ring)
  uint64_t reordered_in_ring = 0;  // the same, within one ring (the protocol keeps it 0)
  uint64_t rx_first_ns = 0, rx_last_ns = 0;  // CLOCK_MONOTONIC of the first and last frame taken
  uint64_t tx_last_ns = 0;                   // ... and of the last frame sent
  uint64_t thread_cpu_ns = 0;                // CPU time of the emulator thread (it plays the NIC)
  std::vector<uint64_t> delivered_per_ring;
  std::vector<uint32_t> latency_ns;  // one per sent frame, up to max_latency_samples
  NicPhaseTimes phases;              // zeros unless phase_timing
};

class NicEmulator {
 public:
  // `sink` may be null (frames are counted, then discarded). The ports must outlive it.
  // `tx_rings`: send from another set's tx rings (a forward between two ring ports: this
  // emulator then plays A's NIC on rx and B's on tx, so latency is measured A-in to B-out);
  // null: the same set's.
  NicEmulator(RingSet& rings, Port& source, Port* sink, DmaEngine& dma, NicEmulatorConfig cfg,
              RingSet* tx_rings = nullptr);
  ~NicEmulator();
  NicEmulator(const NicEmulator&) = delete;
  NicEmulator& operator=(const NicEmulator&) = delete;

  void start();
  // True once the source is exhausted and every frame taken is in a ring or dropped.
  bool rx_finished() const { return rx_finished_.load(std::memory_order_acquire); }
  // Stops the thread (after the rings' loops have exited, so tx has nothing left) and rethrows
  // an error the thread met.
  void join();
  const NicStats& stats() const { return stats_; }  // after join()

 private:
  struct SlotMeta {
    uint64_t seq;
    uint64_t rx_ns;
    uint32_t ring;
  };
  void run();
  bool rx_step();
  bool tx_step(uint32_t ring);
  void fetch_rx_descriptors(uint32_t ring, uint32_t rdt);
  void complete_rx_copies();  // waits for the last rx step's copies, then publishes RDH
  uint32_t pick_ring(const uint8_t* frame, uint32_t len, uint32_t& hash, uint16_t& pkt_info) const;
  // meta_'s index of the slot at bus address `addr` (of either set).
  uint32_t meta_index(uint64_t addr) const;

  RingSet& rings_;
  const RingSetView& v_;
  RingSet& tx_rings_;
  const RingSetView& tv_;
  Port& source_;
  Port* sink_;
  DmaEngine& dma_;
  NicEmulatorConfig cfg_;
  RssTable rss_;

  // rx state
  Batch rx_staging_;
  uint32_t staged_next_ = 0;  // first frame of rx_staging_ not yet handled (flow control)
  std::vector<uint32_t> rdh_, rx_fetched_until_;
  std::vector<RxDesc*> rx_mirror_;   // staging: each ring's descriptors as last fetched
  std::vector<RxDesc*> rx_wb_;       // staging: write-backs of the current step, per ring
  std::vector<uint32_t> wb_first_, wb_count_;
  std::vector<void*> dst_;
  std::vector<const void*> src_;
  std::vector<size_t> size_;
  uint64_t next_seq_ = 0;
  bool rx_copies_pending_ = false;
  uint64_t start_ns_ = 0;

  // tx state
  Batch tx_staging_;
  std::vector<uint32_t> tdh_;
  TxDesc* tx_mirror_ = nullptr;  // staging: descriptors of the current step
  TxDesc* tx_wb_ = nullptr;
  std::vector<uint64_t> last_seq_in_ring_;
  uint64_t max_seq_sent_ = 0;
  bool sent_any_ = false;

  std::vector<SlotMeta> meta_;  // per slot: what the emulator wrote into it
  NicStats stats_;
  std::atomic<bool> stop_{false}, rx_finished_{false};
  std::thread thread_;
  std::exception_ptr error_;
};

}  // namespace gpunfv::gpuring
