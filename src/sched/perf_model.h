// G-NET's performance model (NSDI'18, section 5.2): per NF and packet size, two straight lines
//   L_k = k1 * B + b1   kernel time on ONE SM for a per-SM batch of B packets,
//   L_m = k2 * B + b2   PCIe transfer time (in and out) of a batch of B packets,
// fitted by least squares to what the profiler measured, stored as JSON keyed by device, NF
// name, NF type and packet size. Times are in seconds, batches in packets.
//
// Errors: fit_line throws std::invalid_argument (fewer than two distinct x); ModelStore::load
// throws ConfigError naming the file (unreadable, malformed JSON, missing or bad fields).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpunfv {

// y = k * x + b, with how well it fits the points it came from.
struct LinearFit {
  double k = 0, b = 0;
  double r2 = 0;            // coefficient of determination (1 when all y are equal and fitted)
  double max_rel_err = 0;   // max |fit - y| / |y| over the points (y != 0)
  size_t points = 0;
  double at(double x) const { return k * x + b; }
};

struct Sample {
  double x = 0, y = 0;
};
LinearFit fit_line(const std::vector<Sample>& points);

// One NF's model at one packet size.
struct NfModel {
  double k1 = 0, b1 = 0;  // kernel time on one SM: k1 * B0 + b1 (B0 = packets per SM)
  double k2 = 0, b2 = 0;  // transfer time of a batch: k2 * B + b2 (B = packets in the batch)

  // Eq. 1 (+ C, the scheduler's overhead allowance): time for a batch of n_sms * b0 packets.
  double latency_s(int n_sms, double b0, double c_s = 0) const {
    return k1 * b0 + b1 + k2 * b0 * n_sms + b2 + c_s;
  }
  // Eq. 2: packets per second with n_sms SMs of b0 packets each.
  double throughput_pps(int n_sms, double b0, double c_s = 0) const {
    double l = latency_s(n_sms, b0, c_s);
    return l > 0 ? n_sms * b0 / l : 0;
  }
};

// One profiled (device, NF, packet size): the model plus the evidence for it.
struct ModelEntry {
  std::string device;       // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  std::string nf_name;      // name in the configuration
  std::string nf_type;      // router, firewall, nids, ipsec...
  uint32_t packet_bytes = 0;
  int profile_sms = 0;      // SMs of the partition the kernel ran on (times are per SM batch)
  NfModel model;
  LinearFit kernel_fit, transfer_fit;
  std::vector<Sample> kernel_samples;    // (B per SM, seconds)
  std::vector<Sample> transfer_samples;  // (B, seconds)
  std::string note;                      // how the traffic was made, partition kind...
};

// Builds an entry's model from its samples (fits both lines).
void fit_entry(ModelEntry& e);

class ModelStore {
 public:
  // Replaces an entry with the same key (device, NF name, NF type, packet size).
  void add(ModelEntry e);
  const std::vector<ModelEntry>& entries() const { return entries_; }

  // The model for `packet_bytes`: the measured one, or per coefficient linear between the two
  // nearest measured sizes. nullopt outside the measured range or for an unknown NF/device.
  std::optional<NfModel> find(const std::string& device, const std::string& nf_name,
                              const std::string& nf_type, uint32_t packet_bytes) const;

  nlohmann::json to_json() const;
  static ModelStore from_json(const nlohmann::json& j, const std::string& where);
  void save(const std::string& path) const;
  static ModelStore load(const std::string& path);

 private:
  std::vector<ModelEntry> entries_;
};

}  // namespace gpunfv
