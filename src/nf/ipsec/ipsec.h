// IPsec gateway NF: ESP tunnel mode (RFC 4303), AES-128-CTR (RFC 3686), HMAC-SHA1-96 (RFC 2404).
//
//   - name: esp-out
//     type: ipsec
//     direction: outbound            # or inbound
//     bypass: false                  # packets no SA applies to: drop (default) or pass unchanged
//     iv_epoch: 0                    # optional: high 32 bits of every IV (see below)
//     max_sas: 1024                  # SAs over the run, configured and added live (default
//                                    # 1024, at least the configured ones)
//     sas:
//       - spi: 0x00001000
//         enc_key: 00112233445566778899aabbccddeeff01020304   # hex, 20 bytes: AES key || nonce
//         auth_key: 000102030405060708090a0b0c0d0e0f10111213  # hex, 20 bytes
//         local: 198.51.100.1        # tunnel endpoints: outer source outbound ...
//         remote: 203.0.113.1        # ... and outer destination outbound
//         match: 192.168.2.0/24      # outbound: the destination prefix this SA protects
//
// Outbound: the SA is the one with the longest `match` covering the destination; the packet
// gets an outer IPv4 header (local -> remote, TTL 64, DSCP/ECN and DF copied from the inner
// header), an ESP header with the SA's SPI and next sequence number, the inner packet padded
// to 4 bytes (pad bytes 1, 2, 3) and encrypted, and a 12-byte ICV. The IV is
// iv_epoch << 32 | sequence number: unique per SA within a run and identical on both backends.
// Static keys that outlive a restart reuse IVs (the counter starts at 1 again): give each run
// its own iv_epoch, or new keys.
// Inbound: the SA is found by SPI; ICV verified (constant time), replay window of 64 (RFC 4303
// 3.4.3), decrypted, padding and inner header checked, outer headers stripped. Outer addresses
// are not checked against local/remote (RFC 4301 4.1: the SPI alone identifies a unicast SA),
// and `match` is not used inbound.
//
// Drops: outbound not_ipv4 / ipsec_no_sa (unless bypass), esp_seq_exhausted, oversize (the
// slot cannot hold the ESP packet); inbound not_ipv4 / ipsec_no_sa for non-ESP packets (unless
// bypass), esp_malformed, esp_unknown_spi, esp_bad_icv, esp_replay, and the inner packet's own
// parse reasons (truncated_l4, ...).
//
// Live changes (add_sa, delete_sa; `gpunfv ctl ... ipsec sa add|del`) build the next SA table
// beside the live one and swap it in between batches (nf/live_snapshot.h). The per-SA state
// (sequence numbers, replay windows) is not part of a version: it lives in one array per
// backend, indexed by the SA's slot, which the SA keeps across versions. The ordered passes of
// all batches run in ingress order on either version, so a kept SA's numbers and window go on
// exactly where the previous batch left them, whichever version that batch ran with. Slots are
// not reused within a run (a late packet's record could name a deleted SA's slot), hence
// max_sas.
//
// Keys never appear in logs, reports, describe() or errors.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "nf/ipsec/esp.h"
#include "nf/ipsec/ingress_order.h"
#include "nf/ipsec/sa_table.h"
#include "nf/live_snapshot.h"
#include "nf/network_function.h"
#include "nf/shard_counters.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#include "gpu/device_counters.h"
#include "gpu/device_users.h"
#include "nf/device_packet_count.h"
#endif

namespace gpunfv {

enum class IpsecDirection { outbound, inbound };

// One version of a gateway's SAs (replaced whole by a live change).
struct IpsecTables {
  explicit IpsecTables(esp::SaTable t) : table(std::move(t)) {}
  esp::SaTable table;
#if GPUNFV_HAVE_CUDA
  void upload();
  DevicePacketCount device_packets;  // under gpu_pipeline: fused
#endif
};

class IpsecGateway final : public NetworkFunction {
 public:
  static constexpr uint32_t kDefaultMaxSas = 1024, kMostSas = 65536;

  IpsecGateway(std::string name, IpsecDirection direction, const std::vector<esp::SaConfig>& sas,
               bool bypass = false, uint32_t iv_epoch = 0, uint32_t max_sas = kDefaultMaxSas);
  ~IpsecGateway() override;

  // Reads the keys above. Throws ConfigError naming the line (never echoing a key).
  static std::unique_ptr<IpsecGateway> from_config(const ConfigNode& node);
  // Reads one entry of `sas:` (spi, enc_key, auth_key, local, remote, match), as from_config
  // does; checks within the list are the caller's. Throws ConfigError (never echoing a key).
  static esp::SaConfig sa_from_config(const ConfigNode& n, IpsecDirection direction);

  // Live changes: the next table is built beside the live one and swapped in between batches;
  // kept SAs keep their state. Return the new table version (`what` names it in the report).
  // Throw std::invalid_argument (a duplicate SPI or outbound prefix, an outbound SA without a
  // prefix, max_sas reached, an unknown SPI), changing nothing. Messages never hold a key.
  uint64_t add_sa(const esp::SaConfig& c, std::string what);
  uint64_t delete_sa(uint32_t spi, std::string what);

  std::string_view type() const override { return "ipsec"; }
  void prepare(Backend backend) override;
  // Sequence numbers and replay windows back to the start: prepare() again.
  void rewind(Backend backend) override { prepare(backend); }
  void resume_mid_run() override { order_.resume_mid_run(); }
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override;
  // A batch with no packet for the gateway still takes its turn in ingress order.
  void skip(const BatchView& b, uint8_t position) const override;
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView& device_batch, uint8_t position,
                   const GpuStream& stream) const override;
  void prepare_gpu_lane(const GpuStream& stream) override;
#endif
  uint32_t result_bytes() const override { return esp::kRecordBytes; }
  uint32_t headroom_bytes() const override {
    return direction_ == IpsecDirection::outbound ? esp::kMaxGrowth : 0;
  }
  void collect(const BatchView& b, uint8_t position, const CollectContext& ctx) override;
  // collect() only counts: kCollectShards threads share it (nf/shard_counters.h).
  static constexpr uint32_t kCollectShards = 2;
  uint32_t collect_shards() const override { return kCollectShards; }
  void collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx,
                     uint32_t begin, uint32_t end, uint32_t shard) override;
  // The plain per-packet loop collect() replaced: the reference tests and bench/collect_bench
  // compare it with.
  void collect_per_packet(const BatchView& b, uint8_t position);
  // GPU backend: packets passed per SA counted on the device (ipsec.cu, esp_crypto.cu).
  bool count_on_device() override;
  bool collects() const override { return !device_counting_; }
  void finish() override;
  void report(nlohmann::json& j) const override;
  const TableVersionLog* table_versions() const override { return &tables_.log(); }
  uint64_t table_version() const { return tables_.version(); }
  // "describe", or "sas": one line per SA (SPI, endpoints, prefix, packets; never keys).
  std::string command(std::string_view cmd) const override;
  std::string describe() const override;

  IpsecDirection direction() const { return direction_; }
  uint32_t max_sas() const { return max_sas_; }
  // The live table (tests; valid until the next live change).
  const esp::SaTable& table() const { return tables_.pin()->table; }
  // The view per-packet code reads on the host (tests run the steps through it).
  esp::EspView host_view() const { return view_of(table().host_ref()); }
  // Per-SA state by slot: the CPU backend's (written only by the ordered passes, one at a time).
  IsoSpan<esp::SaState> host_state() const {
    return IsoSpan<esp::SaState>(host_state_.data(), host_state_.size());
  }
  // Packets this NF passed for the SA in `slot` (counted by collect()).
  uint64_t sa_packets(uint32_t slot) const { return sa_packets_.total(slot); }

 private:
  struct GpuState;  // the ordered passes' stream and events (ipsec.cu)
  // What the report and `sas` say of every SA the run had, by slot (deleted ones too).
  struct SlotInfo {
    uint32_t spi, local, remote;
    std::optional<Ipv4Prefix> match;
    bool deleted = false;
  };

  esp::EspView view_of(const esp::SaTableRef& t) const {
    return esp::EspView{t, bypass_, iv_epoch_};
  }
  // A version of these SAs, uploaded when the run is on the GPU.
  std::shared_ptr<const IpsecTables> make_version(std::vector<esp::SaEntry> entries);
  // Publishes `next`; the old version's device work is waited for and counted.
  uint64_t swap_in(std::shared_ptr<const IpsecTables> next, std::string what);

  IpsecDirection direction_;
  bool bypass_;
  uint32_t iv_epoch_;
  uint32_t max_sas_;
  LiveSnapshot<IpsecTables> tables_;
  std::mutex update_m_;  // one live change at a time
  uint32_t next_slot_;   // under update_m_
  mutable std::mutex info_m_;
  std::vector<SlotInfo> slot_info_;  // under info_m_
  Backend backend_ = Backend::cpu;
  mutable std::vector<esp::SaState> host_state_;  // max_sas_ slots
  mutable esp::IngressOrder order_;   // CPU backend: ordered steps in ingress order
  // Per slot: packets this NF passed, from collect(), then a sink slot for the others.
  ShardCounters sa_packets_;
  bool device_counting_ = false;  // count_on_device() taken
#if GPUNFV_HAVE_CUDA
  std::unique_ptr<DeviceCounters> device_counts_;  // per slot (no sink slot)
  struct GpuStateDeleter {
    void operator()(GpuState* s) const;
  };
  void prepare_gpu();
  // Waits for the launches over a replaced version and takes its device packet count.
  void retire(LiveSnapshot<IpsecTables>::Pinned old);
  std::unique_ptr<GpuState, GpuStateDeleter> gpu_;
  DeviceBuffer<esp::SaState> device_state_;  // max_sas_ slots
  // The streams that launched over each version (by version number).
  mutable DeviceUsers device_users_;

 public:
  IsoSpan<esp::SaState> device_state() const { return device_state_.span(); }
  void release_gpu_lane(cudaStream_t stream) override { device_users_.forget_stream(stream); }
#endif
};

}  // namespace gpunfv
