// The NIC emulator's tx engine (see nic_emulator.h): TDT read, descriptors fetched (at most
// tx_burst per fetch), frames copied out with DD written back behind them, frames handed to the
// sink and TDH advanced once their copies are seen complete. Steps are pipelined: a deque of
// fetches and copies in flight, completed in ticket order (one ordered stream).
#include <algorithm>

#include "core/clock.h"
#include "io/gpuring/nic_emu/nic_emulator.h"

namespace gpunfv::gpuring {

namespace {
inline uint64_t stamp(bool on) { return on ? monotonic_ns() : 0; }
}  // namespace

bool NicEmulator::tx_poll_tails() {
  const RingParams& p = v_.p;
  const uint32_t mask = p.ring_size - 1;
  // Fetches and copies in flight at once, over all rings.
  const size_t limit = std::min<size_t>(size_t(cfg_.inflight) * p.rings, DmaEngine::kMaxTicketsInFlight / 2);
  bool busy = false;
  tx_saturated_ = false;
  const size_t before = tx_inflight_.size();
  for (uint32_t r = 0; r < p.rings; ++r) {
    const uint32_t tdt = load_acquire(tx_rings_.host_regs(r).tdt);
    if (tdt != tdt_seen_[r]) {
      // When each descriptor was handed over, for the latency breakdown (the GPU side ends here).
      const uint64_t now = monotonic_ns();
      for (uint32_t d = tdt_seen_[r]; d != tdt; d = (d + 1) & mask) tdt_seen_ns_[r][d] = now;
      tdt_seen_[r] = tdt;
    }
    if (tx_fetch_next_[r] == tdt_seen_[r]) continue;
    if (tx_inflight_.size() >= limit) {
      tx_saturated_ = true;
      continue;
    }
    // One fetch per ring and pass, so no ring waits behind another's backlog.
    const uint64_t t_desc = stamp(cfg_.phase_timing);
    const uint32_t first = tx_fetch_next_[r];
    const uint32_t count = std::min((tdt_seen_[r] - first) & mask, cfg_.tx_burst);
    const TxDesc* ring = tv_.tx_desc + uint64_t(r) * p.ring_size;
    const bool chained = cfg_.chain_tx && tx_dma_->fetch_tx_frames(DmaEngine::TxFetch{
        ring, tx_mirror_[r], p.ring_size, first, count, tx_staging_.base() + tx_staging_.layout().off_data,
        tx_staging_.stride(), r * p.ring_size, p.slot_bytes});
    for (uint32_t done = 0; !chained && done < count;) {
      const uint32_t at = (first + done) & mask;
      const uint32_t n = std::min(count - done, p.ring_size - at);
      tx_dma_->read_async(tx_mirror_[r] + at, ring + at, sizeof(TxDesc) * n);
      done += n;
    }
    using Stage = TxInFlight::Stage;
    tx_inflight_.push_back(TxInFlight{0, r, first, count, chained ? Stage::chained : Stage::fetching});
    tx_fetch_next_[r] = (first + count) & mask;
    busy = true;
    if (cfg_.phase_timing) {
      stats_.phases.tx_desc_read_ns += monotonic_ns() - t_desc;
      ++stats_.phases.tx_desc_fetches;
    }
  }
  // One ticket for the pass's fetches, every ring's: a ticket costs the engine a completion
  // (an event record on the copy engine, a signal and its round trip on the sm engine).
  if (tx_inflight_.size() > before) {
    const uint64_t ticket = tx_dma_->mark();
    for (size_t i = before; i < tx_inflight_.size(); ++i) tx_inflight_[i].ticket = ticket;
  }
  return busy;
}

bool NicEmulator::tx_complete_front() {
  bool any = false;
  tx_copying_.clear();
  while (!tx_inflight_.empty() && tx_dma_->reached(tx_inflight_.front().ticket)) {
    TxInFlight item = tx_inflight_.front();
    tx_inflight_.pop_front();
    switch (item.stage) {
      case TxInFlight::Stage::fetching:
        tx_issue_copies(item);  // the descriptors are here: copy their frames out
        item.stage = TxInFlight::Stage::copying;
        tx_copying_.push_back(item);
        break;
      case TxInFlight::Stage::chained: {
        // Descriptors and frames arrived together: read the descriptors, send, then DD.
        const bool report_status = tx_read_descriptors(item, false);
        if (cfg_.phase_timing) stats_.phases.tx_data_copies += item.count;  // the engine copied each
        tx_deliver(item);
        if (report_status) tx_write_back(item);
        break;
      }
      case TxInFlight::Stage::copying: tx_deliver(item); break;
    }
    any = true;
  }
  if (!tx_copying_.empty()) {
    // One ticket for every copy issued in this pass; tickets grow, so the deque stays in
    // completion order.
    const uint64_t ticket = tx_dma_->mark();
    for (TxInFlight& item : tx_copying_) {
      item.ticket = ticket;
      tx_inflight_.push_back(item);
    }
  }
  return any;
}

bool NicEmulator::tx_read_descriptors(const TxInFlight& item, bool pieces) {
  const RingParams& p = v_.p;
  const uint32_t mask = p.ring_size - 1, r = item.ring;
  tx_pieces_.clear();
  bool report_status = false;
  for (uint32_t k = 0; k < item.count; ++k) {
    const uint32_t d = (item.first + k) & mask;
    const TxDesc& desc = tx_mirror_[r][d];
    const uint32_t len = desc.read.cmd_type_len & kTxLenMask;
    report_status |= (desc.read.cmd_type_len & kTxDcmdRS) != 0;
    // The slot is the tx ring's until DD (tx_write_back) is seen: what rx wrote into it, and
    // its metadata, are stable now.
    tx_frames_[r][d] = TxFrame{meta_[meta_index(desc.read.buffer_addr)], len};
    if (pieces) tx_pieces_.push_back(Piece{r * p.ring_size + d, desc.read.buffer_addr, len});
  }
  return report_status;
}

void NicEmulator::tx_issue_copies(TxInFlight& item) {
  const uint64_t t = stamp(cfg_.phase_timing);
  const bool report_status = tx_read_descriptors(item, true);
  const uint64_t ops = issue_frame_copies(*tx_dma_, tx_staging_, tx_pieces_, false);
  if (cfg_.phase_timing) {
    stats_.phases.tx_copy_ns += monotonic_ns() - t;
    stats_.phases.tx_data_copies += ops;
  }
  // DD behind the frames' reads on the same ordered queue: the driver reuses a slot only once
  // its bytes are out.
  if (report_status) tx_write_back(item);
}

void NicEmulator::tx_write_back(const TxInFlight& item) {
  // DD back into every descriptor that asked for it (RS).
  const RingParams& p = v_.p;
  const uint32_t mask = p.ring_size - 1, r = item.ring;
  const uint64_t t = stamp(cfg_.phase_timing);
  TxDesc* wring = tv_.tx_desc + uint64_t(r) * p.ring_size;
  for (uint32_t k = 0; k < item.count; ++k) {
    const uint32_t d = (item.first + k) & mask;
    tx_wb_[r][d] = tx_mirror_[r][d];
    if (tx_mirror_[r][d].read.cmd_type_len & kTxDcmdRS) {
      tx_wb_[r][d].wb.rsvd = 0;
      tx_wb_[r][d].wb.nxtseq_seed = 0;
      tx_wb_[r][d].wb.status = kTxStatusDD;
    }
  }
  for (uint32_t done = 0; done < item.count;) {
    const uint32_t at = (item.first + done) & mask;
    const uint32_t n = std::min(item.count - done, p.ring_size - at);
    tx_dma_->write_descriptors(wring + at, tx_wb_[r] + at, n);
    done += n;
  }
  if (cfg_.phase_timing) stats_.phases.tx_writeback_ns += monotonic_ns() - t;
}

void NicEmulator::tx_deliver(const TxInFlight& item) {
  const RingParams& p = v_.p;
  const uint32_t mask = p.ring_size - 1, r = item.ring;
  const uint64_t now = monotonic_ns();
  const uint64_t wire = realtime_ns();
  stats_.tx_last_ns = now;
  const BatchView out = tx_staging_.view();
  for (uint32_t k = 0; k < item.count; ++k) {
    const uint32_t d = (item.first + k) & mask;
    const TxFrame& f = tx_frames_[r][d];
    const SlotMeta& m = f.meta;
    if (stats_.latency_ns.size() < cfg_.max_latency_samples)
      stats_.latency_ns.push_back(static_cast<uint32_t>(std::min<uint64_t>(now - m.rx_ns, UINT32_MAX)));
    if (m.seq < sent_ns_.size()) {
      posted_ns_[m.seq] = tdt_seen_ns_[r][d];
      sent_ns_[m.seq] = now;
    }
    if (sent_any_ && m.seq < max_seq_sent_) ++stats_.reordered;
    else max_seq_sent_ = m.seq;
    if (m.seq < last_seq_in_ring_[m.ring]) ++stats_.reordered_in_ring;
    last_seq_in_ring_[m.ring] = std::max(last_seq_in_ring_[m.ring], m.seq);
    sent_any_ = true;
    const uint32_t entry = r * p.ring_size + d;
    out.len[entry] = static_cast<uint16_t>(f.len);
    out.port[entry] = 0;
    out.wire_ns[entry] = wire;
    if (sink_ && !sink_->tx(out, entry)) ++stats_.tx_errors;
    ++stats_.tx_packets;
    live_sent_.store(stats_.tx_packets, std::memory_order_relaxed);
    stats_.tx_bytes += f.len;
  }
  // Every frame up to here is out: the head register moves (the driver's completion signal
  // when write-back is off).
  tdh_[r] = (item.first + item.count) & mask;
  store_release(tx_rings_.host_regs(r).tdh, tdh_[r]);
  if (cfg_.phase_timing) {
    stats_.phases.tx_sink_ns += monotonic_ns() - now;
    ++stats_.phases.tx_steps;
    stats_.phases.tx_frames += item.count;
  }
}

}  // namespace gpunfv::gpuring
