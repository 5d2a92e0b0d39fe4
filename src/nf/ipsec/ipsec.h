// IPsec gateway NF: ESP tunnel mode (RFC 4303), AES-128-CTR (RFC 3686), HMAC-SHA1-96 (RFC 2404).
//
//   - name: esp-out
//     type: ipsec
//     direction: outbound            # or inbound
//     bypass: false                  # packets no SA applies to: drop (default) or pass unchanged
//     iv_epoch: 0                    # optional: high 32 bits of every IV (see below)
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
// Keys never appear in logs, reports, describe() or errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "nf/ipsec/esp.h"
#include "nf/ipsec/ingress_order.h"
#include "nf/ipsec/sa_table.h"
#include "nf/network_function.h"
#include "nf/shard_counters.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_counters.h"
#endif

namespace gpunfv {

enum class IpsecDirection { outbound, inbound };

class IpsecGateway final : public NetworkFunction {
 public:
  IpsecGateway(std::string name, IpsecDirection direction, const std::vector<esp::SaConfig>& sas,
               bool bypass = false, uint32_t iv_epoch = 0);
  ~IpsecGateway() override;

  // Reads the keys above. Throws ConfigError naming the line (never echoing a key).
  static std::unique_ptr<IpsecGateway> from_config(const ConfigNode& node);

  std::string_view type() const override { return "ipsec"; }
  void prepare(Backend backend) override;
  // Sequence numbers and replay windows back to the start: prepare() again.
  void rewind(Backend backend) override { prepare(backend); }
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override;
  // A batch with no packet for the gateway still takes its turn in ingress order.
  void skip(const BatchView& b, uint8_t position) const override;
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView& device_batch, uint8_t position,
                   const GpuStream& stream) const override;
  void prepare_gpu_lane(const GpuStream& stream) override;
  // The ordered pass hands each batch to the NF's ordering stream by events (ipsec.cu).
  bool gpu_orders_across_streams() const override { return true; }
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
  // GPU backend: packets passed per SA counted on the device (ipsec.cu).
  bool count_on_device() override;
  bool collects() const override { return !device_counting_; }
  void finish() override;
  void report(nlohmann::json& j) const override;
  // "describe", or "sas": one line per SA (SPI, endpoints, prefix, packets; never keys).
  std::string command(std::string_view cmd) const override;
  std::string describe() const override;

  IpsecDirection direction() const { return direction_; }
  const esp::SaTable& table() const { return table_; }
  // The view per-packet code reads on the host (tests run the steps through it).
  esp::EspView host_view() const;

 private:
  struct GpuState;  // the ordered passes' stream and events (ipsec.cu)

  IpsecDirection direction_;
  bool bypass_;
  uint32_t iv_epoch_;
  esp::SaTable table_;
  mutable esp::IngressOrder order_;   // CPU backend: ordered steps in ingress order
  static constexpr uint32_t kCounterLanes = 4;
  // Per SA: packets this NF passed, from collect(), then a sink slot for the others.
  ShardCounters sa_packets_;
  bool device_counting_ = false;  // count_on_device() taken
#if GPUNFV_HAVE_CUDA
  std::unique_ptr<DeviceCounters> device_counts_;  // per SA (no sink slot)
  struct GpuStateDeleter {
    void operator()(GpuState* s) const;
  };
  void prepare_gpu();
  std::unique_ptr<GpuState, GpuStateDeleter> gpu_;
  esp::EspView device_view_{};
#endif
};

}  // namespace gpunfv
