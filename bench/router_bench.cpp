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
//
//   router_bench [--config bench/router_bench.yaml] [--packets N] [--threads T] [--json FILE]
//                [--no-peer]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sched.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "chain/processing_stage.h"
#include "chain/runtime_config.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/parse.h"
#include "nf/router/router.h"

#if GPUNFV_HAVE_DPDK
#include "peers/rte_lpm_peer.h"
#endif

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#include "gpu/device_buffer.h"
#endif

using namespace gpunfv;

namespace {

using Batches = std::vector<std::unique_ptr<Batch>>;

Batches make_batches(uint32_t n, uint32_t cap, uint32_t stride, MemoryKind kind) {
  Batches v;
  for (uint32_t i = 0; i < n; ++i) v.push_back(std::make_unique<Batch>(cap, stride, kind));
  return v;
}

// Fills batches from the port; returns packets generated (stops at `limit`).
uint64_t fill(Port& port, Batches& bs, uint64_t limit) {
  uint64_t total = 0;
  for (auto& b : bs) {
    b->set_count(0);
    while (b->count() < b->capacity() && total + b->count() < limit && !port.rx_done()) {
      uint32_t want = static_cast<uint32_t>(
          std::min<uint64_t>(b->capacity() - b->count(), limit - total - b->count()));
      port.rx_burst(*b, want);
    }
    total += b->count();
  }
  return total;
}

void copy_batch(const Batch& from, Batch& to) {
  std::memcpy(to.base(), from.base(), from.layout().bytes);
  to.set_count(from.count());
  to.chain = from.chain;
  to.batch_seq = from.batch_seq;
}

// Runs work(i) for batches 0..n_batches-1 on `threads` threads (each takes the next batch);
// returns the seconds taken.
template <typename Work>
double run_batches(size_t n_batches, unsigned threads, const Work& work) {
  std::atomic<size_t> next{0};
  uint64_t t0 = monotonic_ns();
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n_batches;) work(i);
    });
  for (auto& t : ts) t.join();
  return (monotonic_ns() - t0) / 1e9;
}

double run_cpu(const RuntimeConfig& rc, Batches& bs, size_t n_batches, unsigned threads) {
  return run_batches(n_batches, threads,
                     [&](size_t i) { run_chain_cpu(rc, rc.chains[0], bs[i]->view()); });
}

// One word per looked-up address, rte_lpm's encoding: bit 24 set when found, next hop in the
// low 24 bits (rte_lpm may set bits above; compare with kLookupMask).
constexpr uint32_t kFoundBit = 1u << 24;
constexpr uint32_t kLookupMask = kFoundBit | lpm::kIndexMask;

// Our table's lookup-only loop, writing what rte_lpm_lookup_bulk writes.
void lookup_ours(Dir24_8Ref ref, const uint32_t* addrs, uint32_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    LpmResult r = ref.lookup(addrs[i]);
    out[i] = r.found ? (r.next_hop | kFoundBit) : 0;
  }
}

// The IPv4 destination addresses (host order) of a batch's packets, in packet order; packets
// that are not IPv4 are left out.
void extract_destinations(const Batch& b, std::vector<uint32_t>& out) {
  BatchView v = b.view();
  out.clear();
  for (uint32_t i = 0; i < v.count; ++i) {
    if (v.len[i] > v.stride) continue;
    IsoSpan<const uint8_t> frame = v.data.subspan(size_t(i) * v.stride, v.len[i]);
    PacketHeaders h;
    if (parse_headers(frame, h) != DropReason::none || h.ip_version != 4) continue;
    out.push_back(load_be32(frame, h.l3_off + 16u));
  }
}

// Compares everything egress and later NFs read: bytes, length, verdict, position, egress
// port, headers and flow hash.
[[maybe_unused]] uint64_t count_mismatches(const Batch& a, const Batch& b, std::string* first) {
  BatchView x = a.view(), y = b.view();
  uint64_t bad = 0;
  for (uint32_t i = 0; i < x.count; ++i) {
    bool same = x.len[i] == y.len[i] && x.verdict[i] == y.verdict[i] &&
                x.next_nf[i] == y.next_nf[i] && x.out_port[i] == y.out_port[i] &&
                x.flow_hash[i] == y.flow_hash[i] &&
                std::memcmp(&x.headers[i], &y.headers[i], sizeof(PacketHeaders)) == 0 &&
                std::memcmp(x.data.framework_data() + size_t(i) * x.stride,
                            y.data.framework_data() + size_t(i) * y.stride,
                            std::min<uint32_t>(x.len[i], x.stride)) == 0;
    if (!same && bad++ == 0 && first)
      *first = fmt::format("packet {}: cpu verdict {} port {} / gpu verdict {} port {}", i,
                           x.verdict[i], x.out_port[i], y.verdict[i], y.out_port[i]);
  }
  return bad;
}

struct Row {
  std::string path;
  bool lookup_only = false;  // counts lookups, not packets through the chain: no Gbit/s
  uint64_t packets = 0;
  double seconds = 0;
  double mpps() const { return seconds > 0 ? packets / seconds / 1e6 : 0; }
};

// The chain's first Router, whose table the lookup rows use; null if it has none.
const Router* find_router(const RuntimeConfig& rc) {
  for (auto nf : rc.chains[0].path)
    if (auto* r = dynamic_cast<const Router*>(rc.nfs[nf].get())) return r;
  return nullptr;
}

}  // namespace

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
    for (auto& nf : rc.nfs) nf->prepare(Backend::cpu);
    const uint32_t cap = rc.settings.batch_size, n_batches = rc.settings.batches;
    const uint32_t stride = std::max<uint32_t>(64, (port.max_frame_bytes() + 63) / 64 * 64);
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
    }
#endif
    // Read every tbl24 entry of both tables once before timing (rte_lpm's table lies in EAL
    // memory that nothing has touched where no route covers it: first reads would fault).
    if (router) {
      std::vector<uint32_t> sweep(1u << 16), out(1u << 16);
      for (uint32_t hi = 0; hi < 256; ++hi) {
        for (uint32_t k = 0; k < sweep.size(); ++k) sweep[k] = (hi << 24) | (k << 8);
        lookup_ours(ours, sweep.data(), out.data(), sweep.size());
#if GPUNFV_HAVE_DPDK
        if (rte_lpm) rte_lpm->lookup_bulk_raw(sweep.data(), out.data(), sweep.size());
#endif
      }
    }
    {
      cpu_set_t cpus;
      if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && unsigned(CPU_COUNT(&cpus)) < threads)
        fmt::print(stderr, "router_bench: warning: {} threads but this thread may run on {} CPUs\n",
                   threads, CPU_COUNT(&cpus));
    }

    bool gpu = false;
#if GPUNFV_HAVE_CUDA
    int devices = 0;
    gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    if (!gpu) cudaGetLastError();
    if (gpu) for (auto& nf : rc.nfs) nf->prepare(Backend::gpu);
#endif
    MemoryKind mem = gpu ? MemoryKind::host_pinned : MemoryKind::host;
    Batches in = make_batches(n_batches, cap, stride, mem);
    Batches cpu_out = make_batches(n_batches, cap, stride, MemoryKind::host);
    Batches gpu_out = make_batches(n_batches, cap, stride, mem);
    uint64_t frame_bytes = 0;

    // Destination addresses of one round, one array per batch, and the lookup results.
    std::vector<std::vector<uint32_t>> dst(n_batches), res(n_batches), peer_res(n_batches);
    for (uint32_t i = 0; i < n_batches; ++i) {
      dst[i].reserve(cap);
      res[i].resize(cap);
      peer_res[i].resize(cap);
    }
    uint64_t lookups_compared = 0, lookup_mismatches = 0;
    std::string first_lookup_mismatch;

    Row cpu1{"gpunfv CPU, 1 thread"}, cpun{fmt::format("gpunfv CPU, {} threads", threads)};
    Row ours1{"gpunfv DIR-24-8 lookup only, 1 thread", true};
    Row oursn{fmt::format("gpunfv DIR-24-8 lookup only, {} threads", threads), true};
    Row dpdk1{"DPDK rte_lpm lookup, 1 thread", true};
    Row dpdkn{fmt::format("DPDK rte_lpm lookup, {} threads", threads), true};
    Row gpu_kernel{"gpunfv GPU, kernel only"}, gpu_e2e{"gpunfv GPU, end to end"};
    uint64_t compared = 0, mismatches = 0;
    std::string first_mismatch;
    fmt::print(stderr,
               "router_bench: {} packets, batches of {} x {} B slots, GPU: {}, DPDK peer: {}\n",
               packets, cap, stride, gpu ? "yes" : "no", peer ? "yes" : "no");

#if GPUNFV_HAVE_CUDA
    std::unique_ptr<ProcessingStage> stage;
    std::mutex m;
    std::condition_variable cv;
    size_t finished = 0;
    DeviceBuffer<uint8_t> dev;  // device-resident copies of one round, for kernel-only timing
    std::vector<size_t> dev_off;
    if (gpu) {
      stage = make_gpu_stage(rc, BatchShape{cap, stride, 0});
      stage->start([&](Batch*) {
        std::lock_guard<std::mutex> lk(m);
        ++finished;
        cv.notify_one();
      });
      dev.allocate(in[0]->layout().bytes * n_batches);
    }
#endif

    uint64_t done = 0;
    for (int round = 0; done < packets; ++round) {
      uint64_t n = fill(port, in, packets - done);
      if (n == 0) break;
      size_t used = 0;
      for (auto& b : in) {
        if (b->count() == 0) break;
        BatchView v = b->view();
        for (uint32_t i = 0; i < v.count; ++i) frame_bytes += v.len[i];
        ++used;
      }
      const bool single = round == single_round;
      for (size_t i = 0; i < used; ++i) copy_batch(*in[i], *cpu_out[i]);
      cpun.seconds += run_cpu(rc, cpu_out, used, threads);
      cpun.packets += n;
      if (single) {
        Batches one = make_batches(static_cast<uint32_t>(used), cap, stride, MemoryKind::host);
        for (size_t i = 0; i < used; ++i) copy_batch(*in[i], *one[i]);
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
            for (size_t k = 0; k < dst[i].size(); ++k) {
              uint32_t a = res[i][k] & kLookupMask, b = peer_res[i][k] & kLookupMask;
              bool same = (a & kFoundBit) == (b & kFoundBit) && (!(a & kFoundBit) || a == b);
              if (!same && lookup_mismatches++ == 0)
                first_lookup_mismatch = fmt::format("{}: gpunfv {:#x}, rte_lpm {:#x}",
                                                    format_ipv4(dst[i][k]), a, b);
            }
          lookups_compared += addrs;
        } else {
          time_ours();
        }
#else
        time_ours();
#endif
      }
#if GPUNFV_HAVE_CUDA
      if (gpu) {
        for (size_t i = 0; i < used; ++i) copy_batch(*in[i], *gpu_out[i]);
        finished = 0;
        uint64_t t0 = monotonic_ns();
        for (size_t i = 0; i < used; ++i) stage->submit(gpu_out[i].get());
        {
          std::unique_lock<std::mutex> lk(m);
          cv.wait(lk, [&] { return finished == used; });
        }
        gpu_e2e.seconds += (monotonic_ns() - t0) / 1e9;
        gpu_e2e.packets += n;
        for (size_t i = 0; i < used; ++i) {
          compared += gpu_out[i]->count();
          mismatches += count_mismatches(*cpu_out[i], *gpu_out[i], first_mismatch.empty() ? &first_mismatch : nullptr);
        }
        // Kernel only: the same input already in device memory, one stream per batch slot.
        const BatchLayout& L = in[0]->layout();
        for (size_t i = 0; i < used; ++i)
          GPUNFV_CUDA(cudaMemcpy(dev.data() + i * L.bytes, in[i]->base(), L.bytes, cudaMemcpyHostToDevice));
        std::vector<cudaStream_t> streams(8);
        for (auto& s : streams) GPUNFV_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        cudaEvent_t e0, e1;
        GPUNFV_CUDA(cudaEventCreate(&e0));
        GPUNFV_CUDA(cudaEventCreate(&e1));
        GPUNFV_CUDA(cudaDeviceSynchronize());
        GPUNFV_CUDA(cudaEventRecord(e0));
        for (auto& s : streams) GPUNFV_CUDA(cudaStreamWaitEvent(s, e0));
        for (size_t i = 0; i < used; ++i)
          launch_chain_gpu(rc, rc.chains[0], L.view(dev.data() + i * L.bytes, in[i]->count()),
                           streams[i % streams.size()]);
        for (auto& s : streams) {
          cudaEvent_t e;
          GPUNFV_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
          GPUNFV_CUDA(cudaEventRecord(e, s));
          GPUNFV_CUDA(cudaStreamWaitEvent(nullptr, e));
          GPUNFV_CUDA(cudaEventDestroy(e));
        }
        GPUNFV_CUDA(cudaEventRecord(e1));
        GPUNFV_CUDA(cudaEventSynchronize(e1));
        float ms = 0;
        GPUNFV_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        gpu_kernel.seconds += ms / 1e3;
        gpu_kernel.packets += n;
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        for (auto& s : streams) cudaStreamDestroy(s);
      }
#endif
      done += n;
    }
#if GPUNFV_HAVE_CUDA
    if (stage) stage->stop();
#endif

    double avg_frame = done ? double(frame_bytes) / done : 0;
    std::vector<Row> rows{cpu1, cpun};
    if (router) rows.insert(rows.end(), {ours1, oursn});
    if (peer) rows.insert(rows.end(), {dpdk1, dpdkn});
    if (gpu) rows.insert(rows.end(), {gpu_kernel, gpu_e2e});
    const Row& base = peer ? dpdkn : cpun;
    const std::string base_col = peer ? "vs DPDK N thr." : "vs CPU all thr.";
    fmt::print("\nrouter_bench: {} ({} packets, mean frame {:.0f} B)\n", config, done, avg_frame);
    fmt::print("ratio baseline: \"{}\"; single-thread rows on round {} of batches; lookup-only "
               "rows count destination lookups (no Gbit/s)\n", base.path, single_round);
    if (!peer_note.empty()) fmt::print("{}\n", peer_note);
    fmt::print("\n| {:<40} | {:>10} | {:>10} | {:>16} |\n", "path", "Mpps", "Gbit/s", base_col);
    fmt::print("|{:-<42}|{:->12}|{:->12}|{:->18}|\n", "", "", "", "");
    nlohmann::json j;
    j["config"] = config;
    j["packets"] = done;
    j["mean_frame_bytes"] = avg_frame;
    j["baseline"] = base.path;
    j["single_thread_round"] = single_round;
    if (!peer_note.empty()) j["peer"] = peer_note;
    for (const Row& r : rows) {
      double gbps = r.mpps() * 1e6 * avg_frame * 8 / 1e9;
      double ratio = base.mpps() > 0 ? r.mpps() / base.mpps() : 0;
      std::string gbps_text = r.lookup_only ? "-" : fmt::format("{:.2f}", gbps);
      fmt::print("| {:<40} | {:>10.2f} | {:>10} | {:>15.2f}x |\n", r.path, r.mpps(), gbps_text,
                 ratio);
      nlohmann::json row = {{"path", r.path},   {"packets", r.packets},
                            {"seconds", r.seconds}, {"mpps", r.mpps()},
                            {"ratio", ratio},   {"lookup_only", r.lookup_only}};
      row["gbps"] = r.lookup_only ? nlohmann::json(nullptr) : nlohmann::json(gbps);
      j["rows"].push_back(row);
    }
    if (peer) {
      fmt::print("\nDPDK rte_lpm vs gpunfv DIR-24-8: {} lookups compared, {} mismatches{}\n",
                 lookups_compared, lookup_mismatches,
                 lookup_mismatches ? " (first: " + first_lookup_mismatch + ")" : "");
      j["rte_lpm_vs_dir24_8"] = {{"compared", lookups_compared}, {"mismatches", lookup_mismatches}};
    }
    if (gpu) {
      fmt::print("GPU output vs CPU output: {} packets compared, {} mismatches{}\n", compared,
                 mismatches, mismatches ? " (first: " + first_mismatch + ")" : "");
      j["gpu_vs_cpu"] = {{"compared", compared}, {"mismatches", mismatches}};
    } else {
      fmt::print("no CUDA device: GPU rows and the GPU-vs-CPU comparison were skipped\n");
    }
    if (!json_out.empty()) std::ofstream(json_out) << j.dump(2) << "\n";
    return mismatches || lookup_mismatches ? 1 : 0;
  } catch (const ConfigError& e) {
    fmt::print(stderr, "router_bench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "router_bench: error: {}\n", e.what());
    return 1;
  }
}
