// Router NF: IPv4 longest-prefix-match forwarding over a DIR-24-8 table.
//
//   - name: r1
//     type: router
//     routes: routes/example.routes             # "a.b.c.d/len PORT" per line
//   # or, for a table without next hops (optionally .gz):
//     routes: {file: bart_fulltable_ipv4_prefixes.txt.gz, spread: [p1, p2]}
//
// Drops: not_ipv4, ipv4_bad_checksum, no_route, ttl_expired (checked in that order).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/ipv4_prefix.h"
#include "nf/network_function.h"
#include "nf/router/lpm_dir24_8.h"
#include "nf/router/router_logic.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#endif

namespace gpunfv {

class Router final : public NetworkFunction {
 public:
  // `routes[i].next_hop` indexes `next_hop_ports` (port ids) and `next_hop_names`.
  Router(std::string name, const std::vector<Route>& routes, std::vector<uint16_t> next_hop_ports,
         std::vector<std::string> next_hop_names,
         uint32_t max_tbl8_groups = Dir24_8::kDefaultMaxTbl8Groups);

  // Reads `name`, `type` and `routes` (see above). Throws ConfigError.
  static std::unique_ptr<Router> from_config(
      const ConfigNode& node,
      const std::function<std::optional<uint16_t>(const std::string&)>& port_id_of);

  std::string_view type() const override { return "router"; }
  void prepare(Backend backend) override;
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override;
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView& device_batch, uint8_t position,
                   const GpuStream& stream) const override;
#endif
  // The distinct ports of the next hops.
  std::vector<uint16_t> egress_ports() const override;
  bool collects() const override { return false; }
  // "describe", or "lookup a.b.c.d" (the next-hop port of an address).
  std::string command(std::string_view cmd) const override;
  std::string describe() const override;

  // The loaded prefixes in file order (the traffic generator draws destinations from them).
  const std::vector<Ipv4Prefix>& prefixes() const { return prefixes_; }
  // The routes the table was built from, in file order (for peers that build their own table).
  std::vector<Route> routes() const;
  size_t route_count() const { return prefixes_.size(); }
  const Dir24_8& table() const { return lpm_; }
  // View of the host tables, as process() uses it.
  RouterView host_view() const;

 private:
  std::vector<Ipv4Prefix> prefixes_;
  std::vector<uint32_t> route_next_hops_;  // next hop of prefixes_[i]
  Dir24_8 lpm_;
  std::vector<uint16_t> next_hop_ports_;
  std::vector<std::string> next_hop_names_;
#if GPUNFV_HAVE_CUDA
  DeviceBuffer<uint16_t> device_next_hop_ports_;
  RouterView device_view_{};
#endif
};

}  // namespace gpunfv
