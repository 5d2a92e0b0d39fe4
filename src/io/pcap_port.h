// `type: pcap` port: replays a capture file (rx) and/or writes one (tx), both through libpcap
// with nanosecond timestamps. pcapng input works too (libpcap reads it).
//
//   - name: trace
//     type: pcap
//     rx: traces/in.pcap     # relative to the config file
//     tx: out/out.pcap       # its folder must exist
//     repeat: 3              # replay the capture 3 times (default 1)
//     preload: true          # read the whole capture at open (default true)
//
// Frame length is the record's captured length (a truncated record is a shorter frame, which
// the parser drops with its reason). Timestamps are UNIX ns; with repeat, each later round is
// shifted by the capture's span plus one mean gap, so time never goes back. preload: false
// streams from disk (captures larger than memory); max_frame_bytes() is then 1518 (standard
// Ethernet), as the largest frame is unknown until the end: set settings.slot_bytes for jumbo
// frames, which are otherwise dropped as `oversize`. tx writes each frame with its
// wire_ns, so a capture read and written back keeps its timestamps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "io/port.h"

struct pcap;
struct pcap_dumper;

namespace gpunfv {

class PcapPort final : public Port {
 public:
  // Throws ConfigError (bad keys, unreadable/corrupt/non-Ethernet rx file, bad tx folder).
  PcapPort(const ConfigNode& node, uint16_t id);
  ~PcapPort() override;

  std::string_view type() const override { return "pcap"; }
  bool has_rx() const override { return !rx_path_.empty(); }
  bool has_tx() const override { return !tx_path_.empty(); }

  uint32_t rx_burst(Batch& b, uint32_t max) override;
  bool rx_done() const override { return rx_done_; }
  bool tx(const BatchView& b, uint32_t i) override;
  void flush() override;

  uint32_t max_frame_bytes() const override { return max_frame_bytes_; }
  std::string describe() const override;

 private:
  struct PcapCloser {
    void operator()(pcap* p) const;
  };
  struct DumperCloser {
    void operator()(pcap_dumper* d) const;
  };

  // One frame read from the capture, pointing into libpcap's buffer or the preloaded copy.
  struct Frame {
    const uint8_t* bytes;
    uint32_t len;
    uint64_t ns;
  };

  void open_rx(const ConfigNode& where);
  void preload_rx(const ConfigNode& where);
  bool next_streamed(Frame& f);  // false at end of the capture (or on a read error)
  bool next_preloaded(Frame& f);
  void start_next_round();
  void open_tx(const ConfigNode& where);

  std::string rx_path_, tx_path_;
  uint32_t repeat_ = 1;
  bool preload_ = true;
  uint32_t max_frame_bytes_ = 1518;

  // rx state
  std::unique_ptr<pcap, PcapCloser> rx_handle_;  // open while streaming; closed after preload
  uint32_t round_ = 0;                           // 0-based replay round
  uint64_t round_shift_ns_ = 0;                  // added to timestamps of the current round
  // Timestamp span and frame count of one round, measured during the first round.
  uint64_t min_ns_ = UINT64_MAX, max_ns_ = 0;
  uint64_t frames_per_round_ = 0;
  bool rx_done_ = false;

  // Preloaded capture: all frames back to back in one buffer.
  std::vector<uint8_t> frame_bytes_;
  std::vector<size_t> frame_offset_;
  std::vector<uint32_t> frame_len_;
  std::vector<uint64_t> frame_ns_;
  size_t next_frame_ = 0;

  // tx state
  std::unique_ptr<pcap, PcapCloser> tx_handle_;
  std::unique_ptr<pcap_dumper, DumperCloser> dumper_;  // declared last: closed first
};

}  // namespace gpunfv
