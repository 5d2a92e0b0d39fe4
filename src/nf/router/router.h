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
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/ipv4_prefix.h"
#include "nf/network_function.h"
#include "nf/router/live_routes.h"
#include "nf/router/lpm_dir24_8.h"
#include "nf/router/route_file.h"
#include "nf/router/router_logic.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device_buffer.h"
#include "gpu/device_users.h"
#include "nf/device_packet_count.h"
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
  DevicePacketFnKind device_packet_kind() const override { return DevicePacketFnKind::router; }
  // Pins the live table's copy until the batch is back, so an update waits for it.
  DevicePacketUse device_packet_use() const override;
#endif
  // The distinct ports of the next hops.
  std::vector<uint16_t> egress_ports() const override;
  bool collects() const override { return false; }
  // "describe", or "lookup a.b.c.d" (the next-hop port of an address).
  std::string command(std::string_view cmd) const override;
  std::string describe() const override;
  // `routes`, the live table's version and packets per version (`table_versions`).
  void report(nlohmann::json& j) const override;
  const TableVersionLog* table_versions() const override { return &live_.log(); }
  // GPU backend: adds the packets counted on the device to their table versions.
  void finish() override;

  // Live updates, each one table version applied between batches (nf/router/live_routes.h).
  // A route names its port by id and name; a port not yet a next hop becomes one (the caller
  // checks it can transmit). Throws std::invalid_argument with the reason, changing nothing.
  struct RouteUpdate {
    Ipv4Prefix prefix;
    std::optional<uint16_t> port;  // nullopt: delete the prefix
    std::string port_name;
  };
  uint64_t update(const std::vector<RouteUpdate>& changes, const std::string& what);
  // Makes the table exactly `table` (a route file's contents), changing only what differs.
  uint64_t replace(const RouteTable& table, const std::string& what);
  // The `routes:` file the configuration named (empty for a spread prefix list).
  const std::string& routes_file() const { return routes_file_; }
  const std::vector<std::string>& spread_ports() const { return spread_names_; }

  // The loaded prefixes in file order (the traffic generator draws destinations from them).
  const std::vector<Ipv4Prefix>& prefixes() const { return prefixes_; }
  // The routes the table was built from, in file order (for peers that build their own table).
  std::vector<Route> routes() const;
  // Routes in the live table now.
  size_t route_count() const { return live_.route_count(); }
  const Dir24_8& table() const { return live_.live_table(); }
  const LiveRouteTable& live() const { return live_; }
  // View of the host tables, as process() uses it (the live copy now).
  RouterView host_view() const;

  // Next hops a router may have (the table of ports is sized once: batches read it unlocked).
  static constexpr uint32_t kMaxNextHops = 256;

 private:
  RouterView view_of(const Dir24_8& t) const;
  uint32_t next_hop_for(uint16_t port, const std::string& name);
  std::vector<LiveRouteTable::Change> changes_of(const std::vector<RouteUpdate>& u);

  std::vector<Ipv4Prefix> prefixes_;
  std::vector<uint32_t> route_next_hops_;  // next hop of prefixes_[i]
  LiveRouteTable live_;
  std::vector<uint16_t> next_hop_ports_;   // kMaxNextHops entries, the first next_hops_ used
  std::atomic<uint32_t> next_hops_{0};
  std::vector<std::string> next_hop_names_;
  mutable std::mutex names_m_;             // next_hop_names_ grows under updates
  std::string routes_file_;
  std::vector<std::string> spread_names_;
#if GPUNFV_HAVE_CUDA
  void prepare_gpu_updates();
  void note_device_use(int slot, cudaStream_t s) const;
  // Per copy: packets of launches whose count the host did not know (GpuStream::packets 0),
  // counted on the device and added to the copy's version before it is written again.
  void take_device_packets(int slot);
  DevicePacketCount device_packets_[2];  // per copy, under gpu_pipeline: fused
  DeviceBuffer<uint16_t> device_next_hop_ports_;
  std::array<RouterView, 2> device_views_{};
  // Streams that launched over each copy (by slot) since it was last written (synchronized
  // before it is).
  mutable DeviceUsers device_users_;
  cudaStream_t update_stream_ = nullptr;

 public:
  void release_gpu_lane(cudaStream_t stream) override { device_users_.forget_stream(stream); }
#endif
};

}  // namespace gpunfv
