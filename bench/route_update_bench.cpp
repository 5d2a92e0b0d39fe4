// Route-update benchmark: the router forwards a generator's traffic (through the whole runtime,
// as `gpunfv run` does) while a thread applies route updates to its live table at a set rate;
// each rate's forwarding rate is compared with a run without updates.
//
// Updates change the next hop of random prefixes of the loaded table (a group every
// --interval-us, larger when the previous one ran late), so the table keeps its prefixes, every
// packet keeps a route, and every update writes its prefix's range. Each group is one table
// version (nf/router/live_routes.h), the unit a control-socket command or a route file
// applies. Reported per rate: updates/s applied, groups (versions) per second, the time one
// group took to apply (mean, max), forwarding Mpps and its ratio to the run without updates,
// and whether accounting held (every packet transmitted, none dropped for an update).
//
//   route_update_bench [--config bench/route_update_bench.yaml] [--backend cpu|gpu]
//                      [--seconds S] [--rates 0,10000,100000,200000] [--interval-us U] [--json FILE]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "chain/executor.h"
#include "config/config.h"
#include "core/clock.h"
#include "core/error.h"
#include "nf/router/router.h"

using namespace gpunfv;

namespace {

struct Row {
  uint64_t rate = 0;
  double seconds = 0, mpps = 0, updates_per_s = 0, versions_per_s = 0;
  double group_mean_us = 0, group_max_us = 0;
  uint64_t updates = 0, tx = 0, rx = 0, dropped = 0;
  bool accounting_ok = false;
};

// Applies updates to `router` at `rate` per second in groups every `interval_us`, until `stop`.
struct Updater {
  Router& router;
  uint64_t rate;
  uint32_t interval_us;
  std::vector<std::pair<uint16_t, std::string>> ports;  // next hops to choose from
  uint64_t updates = 0, groups = 0;
  double group_ns_sum = 0, group_ns_max = 0;

  void run(const std::atomic<bool>& stop) {
    const std::vector<Ipv4Prefix>& pool = router.prefixes();
    std::mt19937_64 rng(7);
    const uint64_t t0 = monotonic_ns();
    while (!stop.load()) {
      // Due so far at `rate`, minus what is done: a late group catches up.
      const double due = rate * ((monotonic_ns() - t0) * 1e-9);
      const uint64_t n = due > double(updates) ? uint64_t(due) - updates : 0;
      if (n == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
        continue;
      }
      std::vector<Router::RouteUpdate> group;
      group.reserve(n);
      while (group.size() < n) {
        const auto& [port, name] = ports[rng() % ports.size()];
        group.push_back({pool[rng() % pool.size()], port, name});
      }
      const uint64_t g0 = monotonic_ns();
      router.update(group, "bench");
      const double took = double(monotonic_ns() - g0);
      group_ns_sum += took;
      group_ns_max = std::max(group_ns_max, took);
      updates += group.size();
      ++groups;
    }
  }
};

Router& the_router(RuntimeConfig& rc) {
  for (auto& nf : rc.nfs)
    if (auto* r = dynamic_cast<Router*>(nf.get())) return *r;
  throw ConfigError(rc.file, "the configuration has no router");
}

Row run_at(const std::string& config, Backend backend, double seconds, uint64_t rate, uint32_t interval_us) {
  RuntimeConfig rc = load_runtime_config(config);
  Router& router = the_router(rc);
  Updater up{router, rate, interval_us, {}};
  for (uint16_t p : router.egress_ports()) up.ports.emplace_back(p, rc.ports[p]->name());
  std::atomic<bool> stop{false};
  std::thread updater;
  uint64_t started = 0, ended = 0;
  RunOptions opt;
  opt.backend = backend;
  opt.duration_s = seconds;
  opt.progress = nullptr;
  opt.live_stats = [&](const RunStats* s) {
    if (s && rate) {
      started = monotonic_ns();
      updater = std::thread([&] { up.run(stop); });
    } else if (!s && updater.joinable()) {
      stop = true;
      updater.join();
      ended = monotonic_ns();
    }
  };
  RunStats stats = run(rc, opt);
  if (updater.joinable()) {
    stop = true;
    updater.join();
  }
  Row row;
  row.rate = rate;
  row.seconds = stats.elapsed_s;
  row.rx = stats.total_rx();
  row.tx = stats.total_tx();
  row.dropped = stats.total_dropped();
  row.mpps = row.tx / stats.elapsed_s / 1e6;
  row.accounting_ok = stats.accounting_errors().empty();
  const double update_s = ended > started ? (ended - started) * 1e-9 : 0;
  row.updates = up.updates;
  row.updates_per_s = update_s > 0 ? up.updates / update_s : 0;
  row.versions_per_s = update_s > 0 ? up.groups / update_s : 0;
  row.group_mean_us = up.groups ? up.group_ns_sum / up.groups / 1e3 : 0;
  row.group_max_us = up.group_ns_max / 1e3;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpunfv route-update benchmark: forwarding rate while routes change"};
  std::string config = "bench/route_update_bench.yaml", backend = "cpu", json_out;
  double seconds = 10;
  std::vector<uint64_t> rates = {0, 10000, 100000, 200000};
  uint32_t interval_us = 1000;
  app.add_option("--config", config, "Configuration with a generator feeding one router")->capture_default_str();
  app.add_option("--backend", backend, "cpu or gpu")->check(CLI::IsMember({"cpu", "gpu"}))->capture_default_str();
  app.add_option("--seconds", seconds, "Seconds per rate")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--rates", rates, "Update rates per second (0: the run without updates, the base)")
      ->delimiter(',')->capture_default_str();
  app.add_option("--interval-us", interval_us, "Time between update groups")
      ->check(CLI::Range(10u, 1000000u))->capture_default_str();
  app.add_option("--json", json_out, "Also write the rows as JSON");
  CLI11_PARSE(app, argc, argv);
  if (std::find(rates.begin(), rates.end(), 0) == rates.end()) rates.insert(rates.begin(), 0);
  std::sort(rates.begin(), rates.end());

  try {
    const Backend b = backend == "gpu" ? Backend::gpu : Backend::cpu;
    std::vector<Row> rows;
    for (uint64_t rate : rates) {
      fmt::print(stderr, "route_update_bench: {} updates/s for {} s...\n", rate, seconds);
      rows.push_back(run_at(config, b, seconds, rate, interval_us));
    }
    const double base = rows.front().mpps;
    fmt::print("| target updates/s | applied updates/s | versions/s | group mean us | group max us | Mpps | vs no updates | accounting |\n");
    fmt::print("|---:|---:|---:|---:|---:|---:|---:|---|\n");
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      const double ratio = base > 0 ? r.mpps / base : 0;
      fmt::print("| {} | {:.0f} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.1f}% | {} |\n", r.rate,
                 r.updates_per_s, r.versions_per_s, r.group_mean_us, r.group_max_us, r.mpps,
                 100 * ratio, r.accounting_ok && r.dropped == 0 ? "exact, no drops" : "FAILED");
      out.push_back({{"backend", backend}, {"target_updates_per_s", r.rate}, {"updates", r.updates},
                     {"updates_per_s", r.updates_per_s}, {"versions_per_s", r.versions_per_s},
                     {"group_mean_us", r.group_mean_us}, {"group_max_us", r.group_max_us},
                     {"seconds", r.seconds}, {"rx_packets", r.rx}, {"tx_packets", r.tx},
                     {"dropped", r.dropped}, {"mpps", r.mpps}, {"ratio_to_no_updates", ratio},
                     {"accounting_ok", r.accounting_ok}});
    }
    if (!json_out.empty()) std::ofstream(json_out) << out.dump(2) << "\n";
    for (const Row& r : rows)
      if (!r.accounting_ok || r.dropped) return 1;
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "route_update_bench: {}\n", e.what());
    return 2;
  }
}
