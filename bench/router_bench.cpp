// Router benchmark and GPU-equals-CPU check.
//
// Generates packets with the configured generator port, runs the chain on the CPU backend
// (1 thread and all threads) and on the GPU backend (kernel-only on device-resident batches,
// and end to end: pinned host batches copied in, processed, copied out), compares every GPU
// output packet and its metadata with the CPU's bit for bit, and prints a table.
//
// Peer rows, over the same packets in the same run: with DPDK (GPUNFV_HAVE_DPDK), DPDK's
// rte_lpm (bench/peers) looks up the packets' destination addresses, extracted beforehand into
// one host-order uint32 array per batch; "lookup only" rows time our Dir24_8Ref::lookup over
// the same arrays, writing the same one-word result per address, for a like-for-like pairing.
// Every rte_lpm result is checked against ours. The ratio column is relative to "DPDK rte_lpm
// lookup, N threads" when DPDK is built in, else to the CPU all-threads row.
//
// Single-thread rows run on the second round of batches when there are at least two (the
// first round pays cold caches and first-touch page faults); all-threads rows on every round.
// The other NFs, and the router on a smaller table, are nf_bench's.
//
//   router_bench [--config bench/router_bench.yaml] [--packets N] [--threads T] [--json FILE]
//                [--no-peer]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench_util.h"
#include "router_lookup.h"
#include "chain/processing_stage.h"
#include "config/config.h"
#include "core/clock.h"
#include "core/error.h"

#if GPUNFV_HAVE_DPDK
#include "peers/rte_lpm_peer.h"
#endif

using namespace gpunfv;
using namespace gpunfv::bench;

int main(int argc, char** argv) {
  CLI::App app{"gpunfv router benchmark: CPU vs GPU throughput, GPU output checked against CPU"};
  std::string config = "bench/router_bench.yaml", json_out;
  uint64_t packets = 10'000'000;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  app.add_option("--config", config, "Chain configuration with a generator port")->capture_default_str();
  app.add_option("--packets", packets, "Packets to generate and compare")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads for the all-cores rows")->capture_default_str();
  app.add_option("--json", json_out, "Also write the table as JSON");
  bool no_peer = false;
  app.add_flag("--no-peer", no_peer,
               "Leave out the DPDK rte_lpm rows (building its table takes about a minute)");
  CLI11_PARSE(app, argc, argv);
  threads = std::max(1u, threads);

  try {
    RuntimeConfig rc = load_runtime_config(config);
    Port& port = *rc.ports[rc.chains[0].from];
    if (!port.has_rx()) throw ConfigError(config, "first chain's port has no rx side");
    const BatchShape shape = plan_batch_shape(rc);
    for (auto& nf : rc.nfs) nf->prepare(Backend::cpu);
    const uint32_t cap = shape.capacity, n_batches = rc.settings.batches;
    const uint64_t per_round = uint64_t(cap) * n_batches;
    // Single-thread rows: the second round when there are at least two, else the first.
    const int single_round = packets > per_round ? 1 : 0;

    // The lookup rows: the chain's Router table, and DPDK's rte_lpm built from the same routes
    // (before any worker thread starts: EAL init pins the calling thread, then unpins it).
    const Router* router = find_router(rc);
    Dir24_8Ref ours = router ? router->table().ref() : Dir24_8Ref{};
    bool peer = false;
    std::string peer_note;
#if GPUNFV_HAVE_DPDK
    std::unique_ptr<RteLpmPeer> rte_lpm;
    if (router && !no_peer) {
      fmt::print(stderr, "router_bench: building DPDK rte_lpm from {} routes...\n",
                 router->route_count());
      uint64_t t0 = monotonic_ns();
      rte_lpm = std::make_unique<RteLpmPeer>(router->routes());
      double build_s = (monotonic_ns() - t0) / 1e9;
      peer = true;
      peer_note = fmt::format(
          "peer: {} rte_lpm, built in {:.1f} s, {} tbl8 groups, rte_lpm_lookup_bulk in bursts "
          "of {}; EAL {}",
          dpdk_version(), build_s, rte_lpm->tbl8_groups(), RteLpmPeer::kBurst, dpdk_eal_args());
      touch_tbl24([&](const uint32_t* a, uint32_t* o, size_t n) { rte_lpm->lookup_bulk_raw(a, o, n); });
    }
#endif
    if (router)
      touch_tbl24([&](const uint32_t* a, uint32_t* o, size_t n) { lookup_ours(ours, a, o, n); });
    warn_if_few_cpus("router_bench", threads);

    const bool gpu = gpu_present();
    if (gpu) for (auto& nf : rc.nfs) nf->prepare(Backend::gpu);
    MemoryKind mem = gpu ? MemoryKind::host_pinned : MemoryKind::host;
    Batches in = make_batches(n_batches, shape, mem);
    Batches cpu_out = make_batches(n_batches, shape, MemoryKind::host);
    Batches gpu_out = make_batches(n_batches, shape, mem);
    uint64_t frame_total = 0;

    // Destination addresses of one round, one array per batch, and the lookup results.
    std::vector<std::vector<uint32_t>> dst(n_batches), res(n_batches), peer_res(n_batches);
    for (uint32_t i = 0; i < n_batches; ++i) {
      dst[i].reserve(cap);
      res[i].resize(cap);
      peer_res[i].resize(cap);
    }
    Check lookups;

    Row cpu1{"gpunfv CPU, 1 thread"}, cpun{fmt::format("gpunfv CPU, {} threads", threads)};
    Row ours1{"gpunfv DIR-24-8 lookup only, 1 thread", true};
    Row oursn{fmt::format("gpunfv DIR-24-8 lookup only, {} threads", threads), true};
    Row dpdk1{"DPDK rte_lpm lookup, 1 thread", true};
    Row dpdkn{fmt::format("DPDK rte_lpm lookup, {} threads", threads), true};
    Row gpu_kernel{"gpunfv GPU, kernel only"}, gpu_e2e{"gpunfv GPU, end to end"};
    Check gpu_check;
    fmt::print(stderr,
               "router_bench: {} packets, batches of {} x {} B slots, GPU: {}, DPDK peer: {}\n",
               packets, cap, shape.stride, gpu ? "yes" : "no", peer ? "yes" : "no");
    std::unique_ptr<GpuBench> gpu_bench;
    if (gpu) gpu_bench = std::make_unique<GpuBench>(rc, shape, n_batches);

    uint64_t done = 0;
    for (int round = 0; done < packets; ++round) {
      uint64_t n = fill(port, in, packets - done);
      if (n == 0) break;
      const size_t used = used_batches(in);
      frame_total += frame_bytes(in, used);
      const bool single = round == single_round;
      copy_batches(in, cpu_out, used);
      cpun.seconds += run_cpu(rc, cpu_out, used, threads);
      cpun.packets += n;
      if (single) {
        Batches one = make_batches(static_cast<uint32_t>(used), shape, MemoryKind::host);
        copy_batches(in, one, used);
        cpu1.seconds += run_cpu(rc, one, used, 1);
        cpu1.packets += n;
      }

      if (router) {
        // Outside the timed region: the destination addresses, one array per batch.
        uint64_t addrs = 0;
        for (size_t i = 0; i < used; ++i) {
          extract_destinations(*in[i], dst[i]);
          addrs += dst[i].size();
        }
        auto ours_work = [&](size_t i) {
          lookup_ours(ours, dst[i].data(), res[i].data(), dst[i].size());
        };
        auto time_ours = [&] {
          oursn.seconds += run_batches(used, threads, ours_work);
          oursn.packets += addrs;
          if (single) {
            ours1.seconds += run_batches(used, 1, ours_work);
            ours1.packets += addrs;
          }
        };
#if GPUNFV_HAVE_DPDK
        if (rte_lpm) {
          auto peer_work = [&](size_t i) {
            rte_lpm->lookup_bulk_raw(dst[i].data(), peer_res[i].data(), dst[i].size());
          };
          auto time_peer = [&] {
            dpdkn.seconds += run_batches(used, threads, peer_work);
            dpdkn.packets += addrs;
            if (single) {
              dpdk1.seconds += run_batches(used, 1, peer_work);
              dpdk1.packets += addrs;
            }
          };
          // Alternate which goes first, so neither always finds the other's cache state.
          if (round % 2 == 0) {
            time_ours();
            time_peer();
          } else {
            time_peer();
            time_ours();
          }
          for (size_t i = 0; i < used; ++i)
            for (size_t k = 0; k < dst[i].size(); ++k)
              if (!same_lookup(res[i][k], peer_res[i][k]) && lookups.mismatches++ == 0)
                lookups.first = fmt::format("{}: gpunfv {:#x}, rte_lpm {:#x}", format_ipv4(dst[i][k]),
                                            res[i][k] & kLookupMask, peer_res[i][k] & kLookupMask);
          lookups.compared += addrs;
        } else {
          time_ours();
        }
#else
        time_ours();
#endif
      }
      if (gpu) {
        copy_batches(in, gpu_out, used);
        gpu_e2e.seconds += gpu_bench->end_to_end(gpu_out, used);
        gpu_e2e.packets += n;
        gpu_check.add(compare_batches(cpu_out, gpu_out, used, 1));
        // Kernel only: the same input already in device memory, one stream per batch slot.
        gpu_kernel.seconds += gpu_bench->kernel_only(in, used);
        gpu_kernel.packets += n;
      }
      done += n;
    }
    gpu_bench.reset();

    double avg_frame = done ? double(frame_total) / done : 0;
    std::vector<Row> rows{cpu1, cpun};
    if (router) rows.insert(rows.end(), {ours1, oursn});
    if (peer) rows.insert(rows.end(), {dpdk1, dpdkn});
    if (gpu) rows.insert(rows.end(), {gpu_kernel, gpu_e2e});
    const Row& base = peer ? dpdkn : cpun;
    Columns cols{peer ? "vs DPDK N thr." : "vs CPU all thr."};
    fmt::print("\nrouter_bench: {} ({} packets, mean frame {:.0f} B)\n", config, done, avg_frame);
    fmt::print("ratio baseline: \"{}\"; single-thread rows on round {} of batches; lookup-only "
               "rows count destination lookups (no Gbit/s)\n", base.path, single_round);
    if (!peer_note.empty()) fmt::print("{}\n", peer_note);
    print_header(cols);
    nlohmann::json j;
    j["config"] = config;
    j["packets"] = done;
    j["mean_frame_bytes"] = avg_frame;
    j["baseline"] = base.path;
    j["single_thread_round"] = single_round;
    if (!peer_note.empty()) j["peer"] = peer_note;
    for (const Row& r : rows) {
      print_row(cols, r, avg_frame, base.mpps());
      j["rows"].push_back(row_json(r, avg_frame, base.mpps()));
    }
    auto first_of = [](const Check& c) { return c.mismatches ? " (first: " + c.first + ")" : ""; };
    if (peer) {
      fmt::print("\nDPDK rte_lpm vs gpunfv DIR-24-8: {} lookups compared, {} mismatches{}\n",
                 lookups.compared, lookups.mismatches, first_of(lookups));
      j["rte_lpm_vs_dir24_8"] = {{"compared", lookups.compared}, {"mismatches", lookups.mismatches}};
    }
    if (gpu) {
      fmt::print("GPU output vs CPU output: {} packets compared, {} mismatches{}\n",
                 gpu_check.compared, gpu_check.mismatches, first_of(gpu_check));
      j["gpu_vs_cpu"] = {{"compared", gpu_check.compared}, {"mismatches", gpu_check.mismatches}};
    } else {
      fmt::print("no CUDA device: GPU rows and the GPU-vs-CPU comparison were skipped\n");
    }
    if (!json_out.empty()) std::ofstream(json_out) << j.dump(2) << "\n";
    return gpu_check.mismatches || lookups.mismatches ? 1 : 0;
  } catch (const ConfigError& e) {
    fmt::print(stderr, "router_bench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "router_bench: error: {}\n", e.what());
    return 1;
  }
}
