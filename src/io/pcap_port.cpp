#include "io/pcap_port.h"

#include <fmt/core.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace gpunfv {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kNsPerSec = 1'000'000'000ull;

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t saturating_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// With nanosecond precision libpcap stores nanoseconds in tv_usec.
uint64_t header_ns(const pcap_pkthdr& h) {
  // A pcap record's seconds are unsigned 32-bit, but libpcap hands them over sign-extended (its
  // on-disk struct is signed): from 2038 on tv_sec is negative. Read back the file's value.
  const uint64_t sec = h.ts.tv_sec < 0 ? uint64_t(uint32_t(h.ts.tv_sec)) : uint64_t(h.ts.tv_sec);
  // A pcapng record's seconds may pass what 64-bit nanoseconds hold (after 2554): such a time
  // stays at the largest one rather than wrap to the past.
  if (sec >= UINT64_MAX / kNsPerSec) return UINT64_MAX;
  return saturating_add(sec * kNsPerSec, uint64_t(h.ts.tv_usec));
}

}  // namespace

void PcapPort::PcapCloser::operator()(pcap* p) const { pcap_close(p); }
void PcapPort::DumperCloser::operator()(pcap_dumper* d) const { pcap_dump_close(d); }

PcapPort::PcapPort(const ConfigNode& node, uint16_t id) : Port(node.str("name"), id) {
  node.only_keys({"name", "type", "rx", "tx", "repeat", "preload"});
  if (auto rx = node.get("rx")) {
    rx_path_ = node.path("rx");
    if (rx_path_.empty()) rx->fail("rx: empty path");
  }
  if (auto tx = node.get("tx")) {
    tx_path_ = node.path("tx");
    if (tx_path_.empty()) tx->fail("tx: empty path");
  }
  if (rx_path_.empty() && tx_path_.empty())
    node.fail("pcap port '" + name() + "' needs rx: (a capture to read) and/or tx: (one to write)");
  repeat_ = static_cast<uint32_t>(node.int_or("repeat", 1, 1, 1'000'000'000));
  if (auto p = node.get("preload")) preload_ = p->as_bool();

  if (has_rx() && has_tx()) {
    std::error_code ec;
    if (fs::weakly_canonical(rx_path_, ec) == fs::weakly_canonical(tx_path_, ec))
      node["tx"].fail("tx: '" + tx_path_ + "' is also the rx capture");
  }
  if (has_rx()) {
    open_rx(node["rx"]);
    if (preload_) preload_rx(node["rx"]);
  }
  if (has_tx()) open_tx(node["tx"]);
}

PcapPort::~PcapPort() = default;

void PcapPort::open_rx(const ConfigNode& where) {
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap* h =
      pcap_open_offline_with_tstamp_precision(rx_path_.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  if (!h) where.fail("cannot read capture '" + rx_path_ + "': " + err);
  rx_handle_.reset(h);
  int link = pcap_datalink(h);
  if (link != DLT_EN10MB) {
    const char* link_name = pcap_datalink_val_to_name(link);
    where.fail(
        fmt::format("capture '{}' has link type {} ({}); only Ethernet (EN10MB) is supported",
                    rx_path_, link, link_name ? link_name : "unknown"));
  }
  // Streaming cannot know the largest frame in advance. Sizing slots by the snap length
  // (often 65535) would cost gigabytes, so assume standard frames (1518 B, or the snap length
  // if smaller); larger ones are dropped as `oversize` unless settings.slot_bytes is raised.
  int snap = pcap_snapshot(h);
  max_frame_bytes_ = snap > 0 && snap < 1518 ? uint32_t(std::max(snap, 64)) : 1518u;
}

void PcapPort::preload_rx(const ConfigNode& where) {
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  uint32_t largest = 0;
  int rc = 0;
  while ((rc = pcap_next_ex(rx_handle_.get(), &hdr, &data)) == 1) {
    frame_offset_.push_back(frame_bytes_.size());
    frame_bytes_.insert(frame_bytes_.end(), data, data + hdr->caplen);
    frame_len_.push_back(hdr->caplen);
    uint64_t ns = header_ns(*hdr);
    frame_ns_.push_back(ns);
    min_ns_ = std::min(min_ns_, ns);
    max_ns_ = std::max(max_ns_, ns);
    largest = std::max(largest, hdr->caplen);
  }
  if (rc != PCAP_ERROR_BREAK)
    where.fail("cannot read capture '" + rx_path_ + "': " + pcap_geterr(rx_handle_.get()));
  rx_handle_.reset();
  frames_per_round_ = frame_len_.size();
  // The true largest frame (an empty capture still needs a valid slot size).
  max_frame_bytes_ = std::clamp<uint32_t>(largest, 64, 0xFFFF);
}

bool PcapPort::next_preloaded(Frame& f) {
  if (next_frame_ >= frame_len_.size()) return false;
  f = Frame{frame_bytes_.data() + frame_offset_[next_frame_], frame_len_[next_frame_],
            frame_ns_[next_frame_]};
  ++next_frame_;
  return true;
}

bool PcapPort::next_streamed(Frame& f) {
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  int rc = pcap_next_ex(rx_handle_.get(), &hdr, &data);
  if (rc != 1) {
    // rx must not throw: a capture that breaks mid-way ends the source, with a warning.
    if (rc != PCAP_ERROR_BREAK)
      fmt::print(stderr, "gpunfv: port '{}': reading '{}' stopped: {}\n", name(), rx_path_,
                 pcap_geterr(rx_handle_.get()));
    return false;
  }
  f = Frame{data, hdr->caplen, header_ns(*hdr)};
  if (round_ == 0) {
    min_ns_ = std::min(min_ns_, f.ns);
    max_ns_ = std::max(max_ns_, f.ns);
    ++frames_per_round_;
  }
  return true;
}

void PcapPort::start_next_round() {
  // Each round is shifted by the capture's span plus one mean inter-frame gap, so the replay
  // keeps the capture's rate and time never goes back between rounds.
  uint64_t span = frames_per_round_ > 0 ? max_ns_ - min_ns_ : 0;
  uint64_t gap = frames_per_round_ > 1 ? span / (frames_per_round_ - 1) : 0;
  round_shift_ns_ = saturating_mul(uint64_t(round_), saturating_add(span, gap));
  if (preload_) {
    next_frame_ = 0;
    return;
  }
  char err[PCAP_ERRBUF_SIZE] = {};
  rx_handle_.reset(
      pcap_open_offline_with_tstamp_precision(rx_path_.c_str(), PCAP_TSTAMP_PRECISION_NANO, err));
  if (!rx_handle_) {
    fmt::print(stderr, "gpunfv: port '{}': reopening '{}' failed: {}\n", name(), rx_path_, err);
    rx_done_ = true;
  }
}

uint32_t PcapPort::rx_burst(Batch& b, uint32_t max) {
  if (rx_done_ || !has_rx()) return 0;
  BatchView v = b.view();
  const uint32_t first = b.count();
  const uint32_t want = std::min(max, b.capacity() - first);
  uint8_t* slots = v.data.framework_data();
  uint32_t n = 0;
  while (n < want) {
    Frame f;
    bool got = preload_ ? next_preloaded(f) : next_streamed(f);
    if (!got) {
      ++round_;
      if (round_ >= repeat_ || frames_per_round_ == 0) {
        rx_done_ = true;
        break;
      }
      start_next_round();
      if (rx_done_) break;
      continue;
    }
    const uint32_t slot = first + n;
    std::memcpy(slots + size_t(slot) * v.stride, f.bytes, std::min(f.len, v.stride));
    // Lengths above 65535 cannot be represented; any batch slot is smaller anyway.
    v.len[slot] = static_cast<uint16_t>(std::min<uint32_t>(f.len, 0xFFFF));
    v.port[slot] = id();
    v.wire_ns[slot] = saturating_add(f.ns, round_shift_ns_);
    ++n;
  }
  b.set_count(first + n);
  return n;
}

void PcapPort::open_tx(const ConfigNode& where) {
  fs::path folder = fs::path(tx_path_).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    where.fail("folder '" + folder.string() + "' of tx capture '" + tx_path_ + "' does not exist");
  tx_handle_.reset(
      pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO));
  if (!tx_handle_) where.fail("libpcap could not create a handle for '" + tx_path_ + "'");
  dumper_.reset(pcap_dump_open(tx_handle_.get(), tx_path_.c_str()));
  if (!dumper_)
    where.fail("cannot write capture '" + tx_path_ + "': " + pcap_geterr(tx_handle_.get()));
}

bool PcapPort::tx(const BatchView& b, uint32_t i) {
  if (!dumper_) return false;
  const uint32_t len = b.len[i];
  if (len > b.stride) return false;
  pcap_pkthdr h{};
  const uint64_t ns = b.wire_ns[i];
  h.ts.tv_sec = static_cast<time_t>(ns / kNsPerSec);
  h.ts.tv_usec = static_cast<suseconds_t>(ns % kNsPerSec);  // nanoseconds: see header_ns
  h.caplen = len;
  h.len = len;
  const uint8_t* frame = b.data.subspan(slot_offset(b, i), len).framework_data();
  pcap_dump(reinterpret_cast<u_char*>(dumper_.get()), &h, frame);
  return !std::ferror(pcap_dump_file(dumper_.get()));
}

void PcapPort::flush() {
  if (dumper_) pcap_dump_flush(dumper_.get());
}

std::string PcapPort::describe() const {
  std::string s = "pcap";
  if (has_rx()) {
    s += " rx=" + rx_path_;
    if (repeat_ > 1) s += fmt::format(" repeat={}", repeat_);
    if (!preload_) s += " preload=false";
  }
  if (has_tx()) s += " tx=" + tx_path_;
  return s;
}

}  // namespace gpunfv
