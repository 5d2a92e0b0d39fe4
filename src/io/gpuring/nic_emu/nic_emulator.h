// NicEmulator: an EMULATED Intel 82599 for machines without a NIC that can DMA into GPU memory.
// It plays the NIC's part of the descriptor-ring protocol with two host threads, its rx and tx
// engines, each with its own DMA engine (the GPU's copy engine on its own stream):
//   rx: takes frames from a source Port (pcap, generator) at a set rate, picks a ring by RSS
//       (Toeplitz hash, redirection table), and writes each into the buffer its rx descriptor
//       names, then writes the descriptor back (length, RSS hash, DD|EOP) behind the frame's
//       data on the same ordered stream, so DD never precedes data. Descriptors the driver
//       handed over (those in [RDH, RDT), RDT read from the mapped "BAR" word the GPU writes)
//       are fetched ahead of need, many per copy, as the 82599 prefetches into its descriptor
//       cache. No free descriptor: the frame is dropped and counted (nic_rx_ring_full), as the
//       82599 does (RNBC/missed packets), or held until one is free when flow control is on;
//   tx: reads TDT, fetches the descriptors in [TDH, TDT) (at most tx_burst per fetch), copies
//       the frames out to host memory, writes DD back into descriptors with RS set (behind the
//       data reads, on the same stream), hands the frames to the sink Port, then advances TDH
//       (the register the driver reads when write-back is off).
// Copies are pipelined: a step issues its copies and records a ticket (an event); the next
// step does not wait for it, and what a step's completion allows (publishing RDH, handing a
// frame to the sink, TDH) happens when its ticket is seen complete. A run of adjacent packet
// slots moves in one copy (coalesce: rows of the run's longest frame, or for long frames the
// run's whole span, so bytes after a frame in its slot, a buffer the NIC owns, are written
// too). Every byte into or out of ring memory, frames and descriptors, moves by the DMA engine.
//
// It also measures what a tester around a device under test measures: latency from a frame's
// arrival (its scheduled time when paced, else when taken) to its sending, reordering (against
// the global arrival order, and within each ring), and, with latency_breakdown, where each
// frame's time went: NIC rx DMA, GPU side, NIC tx DMA (NicLatencyBreakdown).
//
// Errors: the constructor throws std::invalid_argument on a source without rx. A GpuError in
// either thread is kept and rethrown by join().
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/batch.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/ring/ring_set.h"
#include "io/gpuring/nic_emu/rss.h"
#include "io/port.h"

namespace gpunfv::gpuring {

struct NicEmulatorConfig {
  double rate_pps = 0;   // offered rate; 0 = as fast as the source and the copy engine allow
  uint32_t burst = 32;   // frames taken from the source per rx step, at most
  uint64_t max_latency_samples = 1u << 24;
  // 802.3x flow control: with the ring full, hold the frame (the link is paused) instead of
  // dropping it. Off by default, as in the papers' measurements; tests use it for exact counts.
  bool flow_control = false;
  uint32_t tx_burst = 64;     // tx descriptors per fetch (and per tx step), at most
  // Time each phase of the emulator's steps (NicStats::phases); two clock reads per phase.
  bool phase_timing = false;
  // No effect since the emulator is pipelined (no step waits for its own copies); kept so that
  // existing configurations still compile.
  bool defer_rx_wait = false;
  // Steps each side may have in flight (copies issued, completion not yet seen). 1: every step
  // waits for the one before it, as the emulator once did.
  uint32_t inflight = 4;
  // A run of adjacent slots moves in one pitched copy; off: one copy per frame (batched call).
  bool coalesce = true;
  // tx fetches descriptors and copies their frames in one step where the DMA engine can chain
  // them (DmaEngine::fetch_tx_frames: the sm engine, memcpy); off: two steps, as on the copy
  // engine, where `coalesce` applies.
  bool chain_tx = true;
  // Record the per-frame split of latency (NicStats::breakdown), for up to max_latency_samples
  // frames (32 bytes each).
  bool latency_breakdown = false;
};

// Where the emulator's time goes (NicEmulatorConfig::phase_timing), summed over its steps.
// Issue times do not include the copies themselves, which complete in the background;
// the *_wait_ns fields are the time a thread was blocked on its copy engine.
struct NicPhaseTimes {
  uint64_t rx_steps = 0, rx_frames = 0, rx_desc_fetches = 0;
  uint64_t rx_source_ns = 0;      // taking frames from the source port
  uint64_t rx_desc_fetch_ns = 0;  // issuing descriptor fetches, and waiting for one needed now
  uint64_t rx_copy_ns = 0;        // staging frames, issuing their copies and the write-backs
  uint64_t rx_wait_ns = 0;        // blocked: every in-flight step still copying
  uint64_t rx_data_copies = 0;    // copy-engine operations for frame data (frames/copies: coalescing)
  uint64_t tx_steps = 0, tx_frames = 0, tx_desc_fetches = 0;
  uint64_t tx_desc_read_ns = 0;   // issuing descriptor fetches
  uint64_t tx_copy_ns = 0;        // issuing the frames' copies out
  uint64_t tx_sink_ns = 0;        // latency bookkeeping and handing frames to the sink
  uint64_t tx_writeback_ns = 0;   // issuing the DD write-backs
  uint64_t tx_wait_ns = 0;        // posted descriptors waiting: every tx step in flight
  uint64_t tx_data_copies = 0;
};

// Per sent frame (up to max_latency_samples, index-aligned, in arrival order), nanoseconds:
//   rx_dma: arrival -> its data and descriptor write-back seen complete by the emulator;
//   gpu:    -> the emulator reads a TDT that covers its tx descriptor (the GPU side's share:
//           rx poll, NF, queue, tx post, tail batching; plus at most one poll of the tx thread);
//   tx_dma: -> its bytes copied out and handed to the sink.
// Completion is seen by polling, a little late; when the GPU side was faster than the rx
// thread's look, its start is taken as the TDT read (gpu = 0), so the three always add up to the
// frame's latency.
struct NicLatencyBreakdown {
  std::vector<uint32_t> rx_dma_ns, gpu_ns, tx_dma_ns;
};

struct NicStats {
  uint64_t offered = 0;            // frames taken from the source
  uint64_t delivered = 0;          // written into an rx ring
  uint64_t drops_ring_full = 0;    // nic_rx_ring_full
  uint64_t drops_oversize = 0;     // longer than a slot (the 82599 would count ROC)
  uint64_t pauses = 0;             // flow control: steps that found the ring full and waited
  uint64_t rx_refetches = 0;       // rx descriptors read again: the fetched copy named no slot
  uint64_t tx_packets = 0, tx_bytes = 0, tx_errors = 0;  // tx_errors: the sink refused
  uint64_t reordered = 0;          // sent after a frame that arrived later (any ring)
  uint64_t reordered_in_ring = 0;  // the same, within one ring (the protocol keeps it 0)
  uint64_t rx_first_ns = 0, rx_last_ns = 0;  // CLOCK_MONOTONIC of the first and last frame taken
  uint64_t tx_last_ns = 0;                   // ... and of the last frame sent
  uint64_t thread_cpu_ns = 0;                // CPU time of the emulator's threads (they play the NIC)
  std::vector<uint64_t> delivered_per_ring;
  std::vector<uint32_t> latency_ns;  // one per sent frame, up to max_latency_samples
  NicPhaseTimes phases;              // zeros unless phase_timing
  NicLatencyBreakdown breakdown;     // empty unless latency_breakdown
};

class NicEmulator {
 public:
  // `sink` may be null (frames are counted, then discarded). The ports must outlive it.
  // `tx_rings`: send from another set's tx rings (a forward between two ring ports: this
  // emulator then plays A's NIC on rx and B's on tx, so latency is measured A-in to B-out);
  // null: the same set's. `dma` is the rx side's engine; the tx side gets dma.make_peer().
  NicEmulator(RingSet& rings, Port& source, Port* sink, DmaEngine& dma, NicEmulatorConfig cfg,
              RingSet* tx_rings = nullptr);
  ~NicEmulator();
  NicEmulator(const NicEmulator&) = delete;
  NicEmulator& operator=(const NicEmulator&) = delete;

  void start();
  // True once the source is exhausted and every frame taken is in a ring or dropped.
  bool rx_finished() const { return rx_finished_.load(std::memory_order_acquire); }
  // Stops both threads (after the rings' loops have exited, so tx has nothing left) and
  // rethrows an error a thread met.
  void join();
  const NicStats& stats() const { return stats_; }  // after join()
  // For a watchdog, from any thread while the emulator runs: frames delivered into the rings
  // and sent out so far, and for how long the rx side has been waiting for its copies (the
  // copy engine) to complete.
  std::string live_state() const;

 private:
  struct SlotMeta {
    uint64_t seq;
    uint64_t rx_ns;
    uint32_t ring;
  };
  // A frame of a step, for issuing its copy: staging index, ring-memory address, length.
  struct Piece {
    uint32_t index;
    uint64_t addr;
    uint32_t len;
  };
  struct RxInFlight {
    uint64_t ticket;
    uint64_t seq_first, seq_end;
    std::vector<uint32_t> rdh;  // each ring's RDH once the step's copies are complete
  };
  struct TxInFlight {
    uint64_t ticket;
    uint32_t ring, first, count;
    // What the ticket covers: the descriptor fetch, then the frames' copies; or both in one
    // step (DmaEngine::fetch_tx_frames).
    enum class Stage : uint8_t { fetching, copying, chained } stage;
  };
  // What tx needs of a frame when it sends it, read when its copy is issued: after that its DD
  // may be written back and its slot reused by rx, which rewrites meta_.
  struct TxFrame {
    SlotMeta meta;
    uint32_t len;
  };

  void run_rx();
  void run_tx();
  // rx (nic_emulator_rx.cpp)
  bool rx_step();
  // Handles rx steps whose copies are complete, in order, first waiting until at least `wait`
  // of them are (0: none; kAll: every step in flight). Whether any was handled.
  bool reap_rx(uint32_t wait);
  static constexpr uint32_t kAll = UINT32_MAX;
  void prefetch_rx_descriptors(uint32_t ring, uint32_t rdt, bool needed_now);
  bool take_from_source();
  // tx (nic_emulator_tx.cpp)
  bool tx_poll_tails();
  bool tx_complete_front();
  void tx_issue_copies(TxInFlight& item);
  // The fetched descriptors read: each frame's metadata kept for tx_deliver and, with
  // `pieces`, its piece queued in tx_pieces_ for the copies; whether any asked for DD (RS).
  bool tx_read_descriptors(const TxInFlight& item, bool pieces);
  void tx_write_back(const TxInFlight& item);
  void tx_deliver(const TxInFlight& item);
  // Issues the copies of `pieces` between ring memory and `staging` (index: the staging entry;
  // merged into runs adjacent in both when coalescing); returns the copy-engine operations.
  uint64_t issue_frame_copies(DmaEngine& dma, const Batch& staging, std::vector<Piece>& pieces, bool to_ring);

  // meta_'s index of the slot at bus address `addr` (of either set).
  uint32_t meta_index(uint64_t addr) const;
  bool is_slot_address(uint64_t addr) const;
  uint64_t rx_buffer_of(uint32_t r, uint32_t d);
  static uint8_t* staging_entry(const Batch& staging, uint32_t index);
  void build_breakdown();

  RingSet& rings_;
  const RingSetView& v_;
  RingSet& tx_rings_;
  const RingSetView& tv_;
  Port& source_;
  Port* sink_;
  DmaEngine& dma_;                      // rx
  std::unique_ptr<DmaEngine> tx_dma_;   // tx
  NicEmulatorConfig cfg_;
  Rss rss_;
  // Host staging of frames, one entry per descriptor (ring r's descriptor d at r * ring_size +
  // d): rx stages a frame there before its copy in, tx copies one out there. A descriptor is
  // used again only after the driver has seen it done, so an entry is never rewritten while its
  // copy is in flight; descriptors adjacent in a ring are adjacent here, so a run of adjacent
  // slots they name is one copy.
  Batch rx_staging_, tx_staging_;

  // rx state
  Batch rx_source_;           // frames as taken from the source
  uint32_t staged_next_ = 0;  // first frame of rx_source_ not yet handled (flow control)
  std::vector<uint32_t> rdh_;
  std::vector<uint32_t> rx_fetched_until_, rx_fetch_issued_until_;
  std::vector<uint64_t> rx_fetch_ticket_;  // 0: no fetch in flight
  std::vector<RxDesc*> rx_mirror_;   // staging: each ring's descriptors as fetched
  std::vector<RxDesc*> rx_wb_;       // staging: write-backs, at their descriptor's index
  std::vector<uint32_t> wb_first_, wb_count_;
  std::vector<Piece> rx_pieces_;
  std::deque<RxInFlight> rx_inflight_;
  std::vector<RxInFlight> rx_spare_;  // finished entries, reused (their rdh vectors)
  std::vector<void*> dst_;
  std::vector<const void*> src_;
  std::vector<size_t> size_;
  uint64_t next_seq_ = 0;
  uint64_t first_offered_ = 0;  // stats_.offered before the frames in rx_source_
  uint64_t taken_ns_ = 0;       // when they were taken
  uint64_t start_ns_ = 0;
  uint64_t rx_cpu_ns_ = 0;

  // tx state
  std::vector<uint32_t> tdh_, tdt_seen_, tx_fetch_next_;
  std::vector<TxDesc*> tx_mirror_;  // staging: each ring's descriptors, at their index
  std::vector<TxDesc*> tx_wb_;
  std::vector<std::vector<TxFrame>> tx_frames_;  // per ring and descriptor
  std::vector<std::vector<uint64_t>> tdt_seen_ns_;  // per ring and descriptor: when TDT covered it
  std::deque<TxInFlight> tx_inflight_;
  std::vector<TxInFlight> tx_copying_;  // tx_complete_front's items whose copies it issued
  std::vector<Piece> tx_pieces_;
  std::vector<void*> tx_dst_;
  std::vector<const void*> tx_src_;
  std::vector<size_t> tx_size_;
  std::vector<uint64_t> last_seq_in_ring_;
  uint64_t max_seq_sent_ = 0;
  bool sent_any_ = false;
  bool tx_saturated_ = false;  // the last pass left posted descriptors unfetched: in-flight limit
  uint64_t tx_cpu_ns_ = 0;

  std::vector<SlotMeta> meta_;  // per slot: what the emulator wrote into it
  // latency_breakdown, per sequence number: arrival and completion seen (rx thread), TDT read
  // covering it and sent (tx thread). 0: not (yet) recorded.
  std::vector<uint64_t> arrived_ns_, visible_ns_, posted_ns_, sent_ns_;
  NicStats stats_;
  std::atomic<bool> stop_{false}, rx_finished_{false};
  std::atomic<uint64_t> live_delivered_{0}, live_sent_{0};
  std::atomic<uint64_t> rx_dma_wait_since_ns_{0};  // CLOCK_MONOTONIC; 0: not waiting
  std::thread rx_thread_, tx_thread_;
  std::exception_ptr rx_error_, tx_error_;
};

}  // namespace gpunfv::gpuring
