// The NIC emulator's rx engine (see nic_emulator.h): frames from the source into the slots the
// rx descriptors name, descriptors written back behind them, descriptor fetches ahead of need.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/clock.h"
#include "io/gpuring/nic_emu/nic_emulator.h"

namespace gpunfv::gpuring {

namespace {
// A phase's start when phase timing is on; 0 (no clock read) otherwise.
inline uint64_t stamp(bool on) { return on ? monotonic_ns() : 0; }
}  // namespace

bool NicEmulator::take_from_source() {
  uint32_t want = cfg_.burst;
  const uint64_t now = monotonic_ns();
  if (cfg_.rate_pps > 0) {
    // Frames due by now at the offered rate, counted from the first.
    const double due = std::floor(double(now - start_ns_) * cfg_.rate_pps / 1e9) + 1;
    if (due <= double(stats_.offered)) return false;
    want = static_cast<uint32_t>(std::min<double>(want, due - double(stats_.offered)));
  }
  rx_source_.set_count(0);
  staged_next_ = 0;
  const uint64_t t_src = stamp(cfg_.phase_timing);
  const uint32_t taken = source_.rx_burst(rx_source_, want);
  if (cfg_.phase_timing) stats_.phases.rx_source_ns += monotonic_ns() - t_src;
  if (taken == 0) return false;
  first_offered_ = stats_.offered;
  taken_ns_ = now;
  if (stats_.rx_first_ns == 0) stats_.rx_first_ns = now;
  stats_.rx_last_ns = now;
  stats_.offered += rx_source_.count();
  return true;
}

void NicEmulator::prefetch_rx_descriptors(uint32_t r, uint32_t rdt, bool needed_now) {
  // The 82599 keeps a descriptor cache and fetches many descriptors per read when it runs low
  // (RXDCTL.PTHRESH/HTHRESH); the emulator fetches everything handed over once fewer than
  // `low` fetched ones are left, one copy per contiguous range, off the critical path.
  const uint32_t size = v_.p.ring_size, mask = size - 1;
  const uint32_t low = std::min(size / 2, std::max(2 * cfg_.burst, 16u));
  uint64_t& ticket = rx_fetch_ticket_[r];
  if (ticket != 0 && dma_.reached(ticket)) {
    rx_fetched_until_[r] = rx_fetch_issued_until_[r];
    ticket = 0;
  }
  const uint32_t ahead = (rx_fetched_until_[r] - rdh_[r]) & mask;
  if (ticket == 0 && rx_fetch_issued_until_[r] != rdt && (needed_now || ahead < low)) {
    const uint64_t t_fetch = stamp(cfg_.phase_timing);
    const RxDesc* ring = v_.rx_desc + uint64_t(r) * size;
    uint32_t from = rx_fetch_issued_until_[r];
    while (from != rdt) {
      const uint32_t end = rdt > from ? rdt : size;
      dma_.read_async(rx_mirror_[r] + from, ring + from, sizeof(RxDesc) * (end - from));
      from = end & mask;
    }
    ticket = dma_.mark();
    rx_fetch_issued_until_[r] = rdt;
    if (cfg_.phase_timing) {
      stats_.phases.rx_desc_fetch_ns += monotonic_ns() - t_fetch;
      ++stats_.phases.rx_desc_fetches;
    }
  }
  if (needed_now && rdh_[r] == rx_fetched_until_[r]) {
    // Nothing fetched is left for this frame: wait for the fetch (a NIC holds the frame in its
    // packet buffer meanwhile).
    const uint64_t t_wait = stamp(cfg_.phase_timing);
    rx_dma_wait_since_ns_.store(monotonic_ns(), std::memory_order_relaxed);
    dma_.wait_for(ticket);
    rx_dma_wait_since_ns_.store(0, std::memory_order_relaxed);
    rx_fetched_until_[r] = rx_fetch_issued_until_[r];
    ticket = 0;
    if (cfg_.phase_timing) stats_.phases.rx_desc_fetch_ns += monotonic_ns() - t_wait;
  }
}

// The buffer address of fetched descriptor d of ring r. The NIC never DMAs outside the ring
// memory (an IOMMU would fault it): a fetched copy naming no slot is read again once, after
// every copy issued so far, and still naming none it stops the emulator with the descriptor.
uint64_t NicEmulator::rx_buffer_of(uint32_t r, uint32_t d) {
  uint64_t addr = rx_mirror_[r][d].read.pkt_addr;
  if (is_slot_address(addr)) return addr;
  ++stats_.rx_refetches;
  dma_.wait();
  dma_.read(rx_mirror_[r] + d, v_.rx_desc + uint64_t(r) * v_.p.ring_size + d, sizeof(RxDesc));
  addr = rx_mirror_[r][d].read.pkt_addr;
  if (!is_slot_address(addr))
    throw std::runtime_error("NIC emulator: rx descriptor " + std::to_string(d) + " of ring " +
                             std::to_string(r) + " names buffer address " + std::to_string(addr) +
                             ", outside the ring's slots");
  return addr;
}

bool NicEmulator::reap_rx(uint32_t wait) {
  bool any = false;
  uint32_t waited = 0;
  while (!rx_inflight_.empty()) {
    RxInFlight& step = rx_inflight_.front();
    if (!dma_.reached(step.ticket)) {
      if (waited >= wait) break;
      const uint64_t t_wait = stamp(cfg_.phase_timing);
      rx_dma_wait_since_ns_.store(monotonic_ns(), std::memory_order_relaxed);
      dma_.wait_for(step.ticket);
      rx_dma_wait_since_ns_.store(0, std::memory_order_relaxed);
      if (cfg_.phase_timing) stats_.phases.rx_wait_ns += monotonic_ns() - t_wait;
    }
    ++waited;
    // The step's frames and write-backs are in ring memory: publish RDH (the head register the
    // NIC advances) and note when the frames became visible.
    const uint64_t now = monotonic_ns();
    const uint64_t end = std::min<uint64_t>(step.seq_end, visible_ns_.size());
    for (uint64_t s = step.seq_first; s < end; ++s) visible_ns_[s] = now;
    for (uint32_t r = 0; r < v_.p.rings; ++r) store_release(rings_.host_regs(r).rdh, step.rdh[r]);
    rx_spare_.push_back(std::move(step));
    rx_inflight_.pop_front();
    any = true;
  }
  return any;
}

bool NicEmulator::rx_step() {
  if (staged_next_ == rx_source_.count() && !take_from_source()) return false;
  // Room for one more step in flight.
  if (rx_inflight_.size() >= cfg_.inflight) reap_rx(uint32_t(rx_inflight_.size() + 1 - cfg_.inflight));

  const RingParams& p = v_.p;
  const uint32_t mask = p.ring_size - 1;
  const BatchView b = rx_source_.view();
  const uint8_t* frames = b.data.framework_data();
  const uint32_t got = rx_source_.count();
  const uint32_t from = staged_next_;
  rx_pieces_.clear();
  std::fill(wb_count_.begin(), wb_count_.end(), 0);
  const uint64_t seq_first = next_seq_;
  const double ns_per_frame = cfg_.rate_pps > 0 ? 1e9 / cfg_.rate_pps : 0;
  const uint64_t t_copy = stamp(cfg_.phase_timing);
  const uint64_t fetch_ns_before = stats_.phases.rx_desc_fetch_ns;  // fetches waited for below
  uint32_t i = from;
  for (; i < got; ++i) {
    const uint32_t len = b.len[i];
    if (len > p.slot_bytes) {
      ++stats_.drops_oversize;
      continue;
    }
    const uint8_t* frame = frames + size_t(i) * b.stride;
    const RssResult rss = rss_.classify(frame, len);
    const uint32_t r = rss.ring;
    const uint32_t rdt = load_acquire(rings_.host_regs(r).rdt);
    if (rdh_[r] == rdt) {  // no descriptor owned by the NIC
      if (cfg_.flow_control) {
        ++stats_.pauses;
        break;
      }
      ++stats_.drops_ring_full;
      continue;
    }
    if (rdh_[r] == rx_fetched_until_[r]) prefetch_rx_descriptors(r, rdt, true);
    const uint32_t d = rdh_[r];
    const uint64_t addr = rx_buffer_of(r, d);
    const uint64_t seq = next_seq_++;
    // Latency counts from the frame's arrival: its scheduled time when paced (a late emulator
    // is the NIC's delay), else when it was taken.
    const uint64_t arrival =
        ns_per_frame > 0 ? start_ns_ + uint64_t(double(first_offered_ + i) * ns_per_frame) : taken_ns_;
    meta_[meta_index(addr)] = SlotMeta{seq, arrival, r};
    if (seq < arrived_ns_.size()) arrived_ns_[seq] = arrival;
    const uint32_t entry = r * p.ring_size + d;
    std::memcpy(staging_entry(rx_staging_, entry), frame, len);
    rx_pieces_.push_back(Piece{entry, addr, len});
    if (wb_count_[r]++ == 0) wb_first_[r] = d;
    RxDesc& wb = rx_wb_[r][d];
    wb.qword[0] = 0;
    wb.wb.pkt_info = rss.pkt_info;
    wb.wb.rss = rss.hash;
    wb.qword[1] = rx_upper(kRxStatusDD | kRxStatusEOP, static_cast<uint16_t>(len), 0);
    rdh_[r] = (d + 1) & mask;
    ++stats_.delivered;
    ++stats_.delivered_per_ring[r];
  }
  staged_next_ = i;
  live_delivered_.store(stats_.delivered, std::memory_order_relaxed);
  if (!rx_pieces_.empty()) {
    // Frame data first, then the write-backs, on one ordered stream: DD never precedes data.
    const uint64_t ops = issue_frame_copies(dma_, rx_staging_, rx_pieces_, true);
    for (uint32_t r = 0; r < p.rings; ++r) {
      uint32_t first = wb_first_[r], left = wb_count_[r];
      RxDesc* ring = v_.rx_desc + uint64_t(r) * p.ring_size;
      while (left > 0) {
        const uint32_t n = std::min(left, p.ring_size - first);
        dma_.write_descriptors(ring + first, rx_wb_[r] + first, n);
        left -= n;
        first = 0;
      }
    }
    RxInFlight step;
    if (!rx_spare_.empty()) {
      step = std::move(rx_spare_.back());
      rx_spare_.pop_back();
    }
    step.ticket = dma_.mark();
    step.seq_first = seq_first;
    step.seq_end = next_seq_;
    step.rdh = rdh_;
    rx_inflight_.push_back(std::move(step));
    if (cfg_.phase_timing) {
      stats_.phases.rx_copy_ns += monotonic_ns() - t_copy - (stats_.phases.rx_desc_fetch_ns - fetch_ns_before);
      stats_.phases.rx_data_copies += ops;
      ++stats_.phases.rx_steps;
      stats_.phases.rx_frames += rx_pieces_.size();
    }
  }
  // Fetch ahead what the driver has handed over since, behind this step's copies.
  for (uint32_t r = 0; r < p.rings; ++r) prefetch_rx_descriptors(r, load_acquire(rings_.host_regs(r).rdt), false);
  return i > from;
}

}  // namespace gpunfv::gpuring
