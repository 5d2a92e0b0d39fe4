// Port-to-port forwarding benchmark (P2PNIC Figures 5-7, Table I, on a host without NICs):
// zero-copy forward (mbuf hand-over), copy forward (every frame copied into a fresh buffer and
// out again), and DPDK's dpdk-testpmd in io mode, on the same kind of ports in the same run.
//
// Ports: DPDK net_ring vdevs. A net_ring port's tx ring is its own rx ring, so two ports and a
// forward each way make a loop in which a seeded burst circulates: what testpmd's
// `--forward-mode=io --tx-first` measures on the same two ports. Chosen because it needs no
// NIC, no privileges and no other process to generate or sink traffic: the forwarder's own
// cost is all that is measured (veth pairs would add the kernel's veth path on the same cores).
// gpunfv runs both forwards in-process on two threads; testpmd runs as its own process with
// two forwarding lcores (--nb-cores=2), the same 32-packet bursts and the same seed (32 per port):
// one interactive process for the whole run, a row being start / stop (forward_bench/testpmd.h),
// or with --testpmd-per-row a process per row.
//
// Reported per packet size: Mpps (both directions together) and Gbit/s (frame bytes), the
// ratios zero-copy / copy and zero-copy / testpmd (also per core used: on a shared host the
// CPU share each side got differs from round to round), CPU cores used (process CPU time /
// wall time over the measured window: getrusage for gpunfv, /proc/PID/stat for testpmd),
// bytes the forwarder copied per packet (the host-memory traffic a NIC-less host can tell
// apart: DMA-free here), and gpunfv's rx->tx latency (p50/p90/p99/p99.9 in the table, 15 CDF
// points per row in results.json; testpmd io mode measures none). A descriptor-batch sweep at the smallest size gives the
// latency cost of batching tx descriptor posts (P2PNIC used 8).
// The zero-copy forward runs with exact byte counts ("gpunfv zero-copy": net_ring keeps no byte
// counters, so every frame's length is read) and without ("gpunfv zc bytes-off", count_bytes:
// off: no frame is read, as testpmd io, which counts no bytes either). Gbit/s is always the
// packet rate times the frame size, in every row.
//
//   forward_bench [--sizes 64,128,256,512,1024,1518] [--seconds 3] [--testpmd dpdk-testpmd]
//                 [--out DIR] [--cpus 0,1] [--rounds 3] [--count-bytes exact,off]
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "chain/forward_spec.h"
#include "core/clock.h"
#include "core/config_node.h"
#include "forward_bench/bare_io_loop.h"
#include "forward_bench/row.h"
#include "forward_bench/testpmd.h"
#include "io/dpdk_port.h"
#include "io/forward/forwarder.h"

using namespace gpunfv;
using namespace gpunfv::bench;

namespace {

constexpr uint32_t kSeed = 32;  // frames seeded per port, as testpmd's --tx-first burst

const char* kEal = "[--no-huge, --no-pci, -m, '1024', --no-shconf, --no-telemetry, --log-level=error]";

// A UDP/IPv4 frame of `size` bytes (without FCS), as testpmd's txonly template.
void udp_frame(uint8_t* f, uint32_t size) {
  std::memset(f, 0, size);
  const uint8_t head[] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
                          0x45, 0, uint8_t((size - 14) >> 8), uint8_t(size - 14), 0, 0, 0, 0, 64, 17, 0, 0,
                          198, 18, 0, 1, 198, 18, 0, 2, 0x04, 0xd2, 0x16, 0x2e};
  std::memcpy(f, head, sizeof head);
}

std::unique_ptr<Port> ring_port(uint16_t id) {
  const std::string dev = fmt::format("net_ring{}", 100 + id);
  YAML::Node n = YAML::Load(fmt::format("{{name: {}, type: dpdk, device: {}, mbufs: 8191, eal: {}}}",
                                        dev, dev, kEal));
  return make_dpdk_port(ConfigNode(n, "forward_bench"), id);
}

void seed(Port& p, uint32_t size) {
  Batch b(kSeed, 2048, MemoryKind::host);
  BatchView v = b.view();
  for (uint32_t i = 0; i < kSeed; ++i) {
    udp_frame(v.data.framework_data() + size_t(i) * 2048, size);
    v.len[i] = uint16_t(size);
  }
  b.set_count(kSeed);
  v = b.view();
  for (uint32_t i = 0; i < kSeed; ++i) p.tx(v, i);
  p.tx_burst_end();
}

// The run's two net_ring ports (ids 0 and 1), made once and shared by every row: a net_ring
// vdev reserves 16 rings of which closing it frees only the queues configured, so a port pair
// per row ran EAL out of memzones after about 270 rows. A row takes them drained of what the
// row before left circulating and seeded with its own frames (kSeed per port it uses).
std::unique_ptr<Port> g_ring_ports[2];

struct RingPorts {
  Port& a;
  Port& b;  // a itself with one port
};

RingPorts ring_ports(bool one_port, uint32_t size) {
  for (uint16_t i = 0; i < (one_port ? 1 : 2); ++i) {
    if (!g_ring_ports[i]) g_ring_ports[i] = ring_port(i);
    ZeroCopyIo& zc = *g_ring_ports[i]->zero_copy();
    void* frames[64];
    while (const uint32_t n = zc.zc_rx_handles(frames, 64, nullptr)) zc.zc_free_handles(frames, n);
    seed(*g_ring_ports[i], size);
  }
  return {*g_ring_ports[0], *g_ring_ports[one_port ? 0 : 1]};
}

// Pins the calling thread to one CPU, as testpmd pins its forwarding lcores.
void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// The measured window of a row, after a 300 ms warm-up: packets `sent()` grew by, seconds, and
// CPU cores this process used meanwhile (getrusage).
struct Window {
  uint64_t packets = 0;
  double seconds = 0, cores = 0;
};
Window measure(const std::function<uint64_t()>& sent, double seconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // warm-up
  rusage r0{}, r1{};
  getrusage(RUSAGE_SELF, &r0);
  const uint64_t n0 = sent(), t0 = monotonic_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const uint64_t n1 = sent(), t1 = monotonic_ns();
  getrusage(RUSAGE_SELF, &r1);
  Window w;
  w.packets = n1 - n0;
  w.seconds = (t1 - t0) / 1e9;
  w.cores = (cpu_seconds(r1) - cpu_seconds(r0)) / w.seconds;
  return w;
}

// Two ports, a forward each way on its own pinned thread; or, with `one_port`, one port whose
// frames a single forward on one thread sends back to it (the per-core cost alone, no traffic
// between cores; testpmd: one port, --port-topology=loop, one forwarding core).
Row run_gpunfv(ForwardMode mode, uint32_t size, uint32_t db, double seconds,
               const std::vector<int>& cpus, bool one_port, uint32_t latency_sample,
               ByteCounting count_bytes = ByteCounting::exact) {
  const RingPorts ports = ring_ports(one_port, size);
  Port &a = ports.a, &pb = ports.b;
  ForwardSpec ab, ba;
  ab.name = "a=>b", ab.from = 0, ab.to = one_port ? 0 : 1;
  ba.name = "b=>a", ba.from = 1, ba.to = 0;
  for (ForwardSpec* s : {&ab, &ba})
    s->mode = mode, s->descriptor_batch = db, s->burst = 32, s->latency_sample = latency_sample,
    s->count_bytes = count_bytes;
  PortCounters ca, cb;
  PortCounters& cpb = one_port ? ca : cb;
  Forwarder f1(ab, a, pb, ca, cpb), f2(ba, pb, a, cpb, ca);
  std::atomic<bool> stop{false};
  auto should_stop = [&] { return stop.load(std::memory_order_relaxed); };
  std::thread t1([&] { pin(cpus[0]); f1.run(should_stop); }), t2;
  if (!one_port) t2 = std::thread([&] { pin(cpus[1 % cpus.size()]); f2.run(should_stop); });
  const Window w = measure([&] { return one_port ? ca.tx_packets.load() : ca.tx_packets + cb.tx_packets; }, seconds);
  stop = true;
  t1.join();
  if (t2.joinable()) t2.join();
  Row row;
  row.what = mode == ForwardMode::copy ? "gpunfv copy"
             : count_bytes == ByteCounting::off ? "gpunfv zc bytes-off" : "gpunfv zero-copy";
  row.size = size;
  row.descriptor_batch = db;
  row.mpps = w.packets / w.seconds / 1e6;
  row.gbps = row.mpps * 1e6 * size * 8 / 1e9;
  row.cores = w.cores;
  const uint64_t pkts = f1.result().sent + (one_port ? 0 : f2.result().sent);
  row.packets = pkts;
  row.timed = f1.result().latency.count() + f2.result().latency.count();
  row.latency_sample = f1.result().latency_sample;
  row.byte_counts = f1.result().byte_counts;
  row.copied_per_pkt = pkts ? double(f1.result().copied_bytes + f2.result().copied_bytes) / pkts : 0;
  LatencyHistogram lat = f1.result().latency;
  lat.merge(f2.result().latency);
  row.latency = true;
  row.p50 = lat.quantile(0.5), row.p90 = lat.quantile(0.9), row.p99 = lat.quantile(0.99);
  row.p999 = lat.quantile(0.999);
  for (double q : {0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999})
    row.cdf.emplace_back(q, lat.quantile(q));
  if (!f1.zero_copy() && mode == ForwardMode::zerocopy) row.note = "fell back to copy";
  const uint64_t posts = f1.result().posts + (one_port ? 0 : f2.result().posts);
  if (mode == ForwardMode::zerocopy)
    row.note = fmt::format("bytes: {}, {:.1f} frames/post", row.byte_counts, posts ? double(pkts) / posts : 0.0) + row.note;
  // A drop shrinks the circulating seed: say so, the rate is then not comparable.
  for (const Forwarder* f : {&f1, &f2})
    for (int r = 1; r < kMaxDropReasons; ++r)
      if (uint64_t n = f->result().drops.by_reason[r])
        row.note += fmt::format(" {} {}", n, drop_reason_name(DropReason(r)));
  return row;
}

// testpmd io's loop alone (bench/forward_bench/bare_io_loop.h) on the same kind of ports and
// threads as run_gpunfv: what our forward's bookkeeping costs, apart from the process around it.
Row run_bare(uint32_t size, double seconds, const std::vector<int>& cpus, bool one_port) {
  const RingPorts ports = ring_ports(one_port, size);
  const int ia = ports.a.zero_copy()->zc_ethdev_port(), ib = ports.b.zero_copy()->zc_ethdev_port();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> s1{0}, s2{0};
  std::thread t1([&] { pin(cpus[0]); bare_io_loop(uint16_t(ia), uint16_t(ib), stop, s1); }), t2;
  if (!one_port)
    t2 = std::thread([&] { pin(cpus[1 % cpus.size()]); bare_io_loop(uint16_t(ib), uint16_t(ia), stop, s2); });
  const Window w = measure([&] { return s1 + s2; }, seconds);
  stop = true;
  t1.join();
  if (t2.joinable()) t2.join();
  Row row;
  row.what = "bare io loop";
  row.size = size;
  row.descriptor_batch = 32;
  row.mpps = w.packets / w.seconds / 1e6;
  row.gbps = row.mpps * 1e6 * size * 8 / 1e9;
  row.cores = w.cores;
  row.packets = s1 + s2;
  row.note = "testpmd io's loop in forward_bench (no counts, no latency)";
  return row;
}

// The rows given a ratio to testpmd (and to the copy forward): the zero-copy ones and the bare
// loop, at testpmd's 32 frames per post (not the descriptor-batch sweep).
bool compared_with_testpmd(const Row& r) {
  return (r.what == "gpunfv zero-copy" || r.what == "gpunfv zc bytes-off" || r.what == "bare io loop") &&
         r.descriptor_batch == 32;
}

// The median over rounds of (this row's rate / testpmd's rate of the same round, same size);
// 0 for rows not compared with testpmd or without testpmd's rounds.
double paired_tpmd_ratio(const Row& r, const std::vector<Row>& rows) {
  if (!compared_with_testpmd(r) || r.round_mpps.empty()) return 0;
  for (const Row& o : rows)
    if (o.what == "dpdk-testpmd io" && o.size == r.size && o.round_mpps.size() == r.round_mpps.size()) {
      std::vector<double> q;
      for (size_t i = 0; i < r.round_mpps.size(); ++i)
        if (o.round_mpps[i] > 0) q.push_back(r.round_mpps[i] / o.round_mpps[i]);
      if (q.empty()) return 0;
      std::sort(q.begin(), q.end());
      return q.size() % 2 ? q[q.size() / 2] : (q[q.size() / 2 - 1] + q[q.size() / 2]) / 2;
    }
  return 0;
}

std::string table(const std::vector<Row>& rows) {
  std::string s = fmt::format("{:<19} {:>6} {:>4} {:>9} {:>15} {:>9} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>20}  {}\n",
                              "forwarder", "bytes", "db", "Mpps", "min-max", "Gbit/s", "cores", "Mpps/core", "copied B",
                              "p50 ns", "p90 ns", "p99 ns", "p99.9 ns", "zc/copy", "zc/tpmd", "note");
  for (const Row& r : rows) {
    std::string ratio_copy = "", ratio_tpmd = "";
    if (compared_with_testpmd(r))
      for (const Row& o : rows)
        if (o.size == r.size && o.mpps > 0) {
          if (o.what == "gpunfv copy") ratio_copy = fmt::format("{:.2f}x", r.mpps / o.mpps);
          if (o.what == "dpdk-testpmd io") ratio_tpmd = fmt::format("{:.2f}x", r.mpps / o.mpps);
          if (o.what == "dpdk-testpmd io" && r.cores > 0 && o.cores > 0)
            ratio_tpmd += fmt::format(" ({:.2f}x/core)", (r.mpps / r.cores) / (o.mpps / o.cores));
        }
    std::string note = r.note;
    if (const double p = paired_tpmd_ratio(r, rows); p > 0) note = fmt::format("paired {:.2f}x; {}", p, note);
    auto lat = [&](uint64_t v) { return r.latency ? fmt::format("{}", v) : std::string("-"); };
    s += fmt::format("{:<19} {:>6} {:>4} {:>9.2f} {:>15} {:>9.2f} {:>7.2f} {:>10.2f} {:>9.0f} {:>9} {:>9} {:>9} {:>10} {:>8} {:>20}  {}\n",
                     r.what, r.size, r.descriptor_batch, r.mpps,
                     fmt::format("{:.2f}-{:.2f}", r.mpps_min, r.mpps_max), r.gbps, r.cores,
                     r.cores > 0 ? r.mpps / r.cores : 0.0, r.copied_per_pkt,
                     lat(r.p50), lat(r.p90), lat(r.p99), lat(r.p999), ratio_copy, ratio_tpmd, note);
  }
  return s;
}

}  // namespace

int run_bench(int argc, char** argv);

// A configuration or device error (a port that cannot be made) ends the run with its message.
int main(int argc, char** argv) {
  try {
    return run_bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "forward_bench: %s\n", e.what());
    return 1;
  }
}

int run_bench(int argc, char** argv) {
#if !GPUNFV_HAVE_DPDK_PORT
  std::fprintf(stderr, "forward_bench needs the dpdk port (build with libdpdk)\n");
  return 1;
#endif
  CLI::App app{"gpunfv forward benchmark: zero-copy vs copy forward vs dpdk-testpmd io"};
  std::vector<uint32_t> sizes = {64, 128, 256, 512, 1024, 1518};
  double seconds = 3;
  std::string testpmd = "dpdk-testpmd", out_dir;
  std::vector<int> cpus = {0, 1};
  int rounds = 3;
  bool one_port = false, no_copy = false, no_sweep = false, bare_loop = false, testpmd_per_row = false;
  uint32_t latency_sample = ForwardSpec{}.latency_sample;
  std::vector<std::string> count_bytes = {"exact", "off"};
  app.add_option("--sizes", sizes, "Frame sizes (bytes, without FCS)")->delimiter(',');
  app.add_option("--seconds", seconds, "Measured seconds per row")->capture_default_str();
  app.add_option("--testpmd", testpmd, "dpdk-testpmd binary ('' to skip)")->capture_default_str();
  app.add_option("--out", out_dir, "Write table.txt and results.json here");
  app.add_option("--cpus", cpus, "CPUs of the two forwarding threads / lcores")->delimiter(',');
  app.add_option("--rounds", rounds, "Runs per row; the best is kept")->capture_default_str();
  app.add_flag("--one-port", one_port,
               "One port looped onto itself by one forward on one core (testpmd: "
               "--port-topology=loop, one forwarding core): the per-core cost without traffic between cores");
  app.add_option("--latency-sample", latency_sample,
                 "Forwards time one rx burst in this many (1: every frame)")->capture_default_str();
  app.add_option("--count-bytes", count_bytes,
                 "Zero-copy rows to run: exact (bytes counted, every frame's length read on net_ring), "
                 "off (count_bytes: off, no frame read); the sweep uses the first")
      ->delimiter(',')
      ->check(CLI::IsMember({"exact", "off"}))
      ->capture_default_str();
  app.add_flag("--testpmd-per-row", testpmd_per_row,
               "Start testpmd for every row (--tx-first, --stats-period=1, 3 s start-up) instead of "
               "one interactive testpmd whose rows are start/stop");
  app.add_flag("--no-copy", no_copy, "Leave the copy forward's rows out");
  app.add_flag("--no-sweep", no_sweep, "Leave the descriptor-batch sweep out");
  app.add_flag("--bare-loop", bare_loop,
               "Add rows of testpmd io's loop alone, built into this binary, on the same ports and "
               "threads: our forward's bookkeeping apart from what surrounds either loop");
  std::string host;
  app.add_option("--host", host, "Name of this host in the header and results.json "
                                 "(default: its hostname)");
  CLI11_PARSE(app, argc, argv);

  const unsigned ncpu = std::thread::hardware_concurrency();
  if (host.empty()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    host = name;
  }
  std::string header = fmt::format(
      "forward_bench on {} ({} CPUs{}). Ports: DPDK net_ring vdevs (tx ring = own rx ring), {}\n"
      "with {} frames seeded per port: the loop testpmd --tx-first measures;\n"
      "no NIC, no privileges, no traffic generator sharing the cores. Mpps = {}.\n"
      "Forwarding threads/lcores pinned to CPUs {}; median [min-max] of {} interleaved rounds per row.\n"
      "gpunfv latency: the zero-copy (burst-native) loop times one rx burst in {}; copy times every frame.\n"
      "Zero-copy rows: {}. Gbit/s = Mpps x frame size in every row (no row reads a byte counter).\n",
      host, ncpu, ncpu <= 2 ? ", shared with other work: figures are noisy, ratios in one run matter" : "",
      one_port ? "one port looped onto\nitself by one forward on one core (testpmd --port-topology=loop, one core)"
               : "two\nforwards a=>b and b=>a on two cores",
      kSeed, one_port ? "the one port's tx" : "both directions", fmt::join(cpus, ","), rounds, latency_sample,
      fmt::join(count_bytes, ", "));
  std::fputs(header.c_str(), stdout);
  // Each configuration runs `rounds` times, the configurations of a size in turn (zero-copy,
  // copy, testpmd, zero-copy, ...), so a disturbance of the host spreads over all of them; a row
  // is its median round (its latency figures too) with the rounds' min and max. The ratio to
  // testpmd is also given as the median of the rounds' own ratios (`paired`): each pairs two
  // runs next to each other in time, which a host whose speed drifts from one stretch of
  // seconds to the next disturbs less than two medians.
  auto best_of = [&](std::vector<std::function<Row()>> measures) {
    std::vector<std::vector<Row>> runs(measures.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t m = 0; m < measures.size(); ++m) runs[m].push_back(measures[m]());
    std::vector<Row> rows;
    for (std::vector<Row>& got : runs) {
      std::vector<double> seen;
      for (const Row& x : got) seen.push_back(x.mpps);
      std::sort(got.begin(), got.end(), [](const Row& a, const Row& b) { return a.mpps < b.mpps; });
      Row row = got[got.size() / 2];
      row.round_mpps = std::move(seen);
      row.mpps_min = got.front().mpps;
      row.mpps_max = got.back().mpps;
      rows.push_back(std::move(row));
    }
    return rows;
  };
  std::unique_ptr<TestpmdSession> session;
  if (!testpmd.empty() && !testpmd_per_row) session = std::make_unique<TestpmdSession>(testpmd, cpus, one_port);
  std::vector<Row> rows;
  for (uint32_t size : sizes) {
    std::vector<std::function<Row()>> m;
    for (const std::string& c : count_bytes) {
      const ByteCounting counting = c == "off" ? ByteCounting::off : ByteCounting::exact;
      m.push_back([&, counting] {
        return run_gpunfv(ForwardMode::zerocopy, size, 32, seconds, cpus, one_port, latency_sample, counting);
      });
    }
    if (!no_copy) m.push_back([&] { return run_gpunfv(ForwardMode::copy, size, 32, seconds, cpus, one_port, latency_sample); });
    if (bare_loop) m.push_back([&] { return run_bare(size, seconds, cpus, one_port); });
    if (!testpmd.empty())
      m.push_back([&] {
        return session ? session->measure(size, seconds) : run_testpmd(testpmd, size, seconds, cpus, one_port);
      });
    std::vector<Row> got = best_of(m);
    rows.insert(rows.end(), got.begin(), got.end());
    std::fputs(table(got).c_str(), stdout);
    std::fflush(stdout);
  }
  // Descriptor batching: posts of 1, 8 (P2PNIC) and 32 frames at the smallest size.
  const ByteCounting sweep_counting = !count_bytes.empty() && count_bytes[0] == "off" ? ByteCounting::off : ByteCounting::exact;
  if (!no_sweep)
  for (const Row& r : best_of({[&] { return run_gpunfv(ForwardMode::zerocopy, sizes.front(), 1, seconds, cpus, one_port, latency_sample, sweep_counting); },
                               [&] { return run_gpunfv(ForwardMode::zerocopy, sizes.front(), 8, seconds, cpus, one_port, latency_sample, sweep_counting); }}))
    rows.push_back(r);
  std::string t = table(rows);
  if (!testpmd.empty()) {
    std::string tsc;
    tsc_rate_ratio(&tsc);
    if (!tsc.empty()) t += tsc + " (testpmd rows are its Tx-pps scaled by measured / assumed)\n";
  }
  std::fputs(("\n" + t).c_str(), stdout);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    std::ofstream(out_dir + "/table.txt") << header << "\n" << t;
    nlohmann::json j = nlohmann::json::array();
    for (const Row& r : rows)
      j.push_back({{"forwarder", r.what}, {"bytes", r.size}, {"descriptor_batch", r.descriptor_batch},
                   {"mpps", r.mpps}, {"gbps", r.gbps}, {"cores", r.cores},
                   {"mpps_per_core", r.cores > 0 ? r.mpps / r.cores : 0.0},
                   {"copied_bytes_per_packet", r.copied_per_pkt}, {"latency_ns", r.latency ? nlohmann::json{{"p50", r.p50}, {"p90", r.p90}, {"p99", r.p99}, {"p999", r.p999}} : nlohmann::json()},
                   {"latency_cdf_ns", r.cdf}, {"packets", r.packets}, {"latency_timed", r.timed},
                   {"latency_sample", r.latency_sample}, {"byte_counts", r.byte_counts},
                   {"round_mpps", r.round_mpps}, {"mpps_min", r.mpps_min}, {"mpps_max", r.mpps_max},
                   {"paired_testpmd_ratio", paired_tpmd_ratio(r, rows)},
                   {"note", r.note}});
    std::ofstream(out_dir + "/results.json") << nlohmann::json{{"host", host}, {"cpus", ncpu}, {"rows", j}}.dump(2) << "\n";
  }
  for (auto& p : g_ring_ports) p.reset();  // while EAL is up (not at static destruction)
  return 0;
}
