// Generator port speed: each rx queue drained by its own thread into its own batch, as the
// executor's ingress threads do, without the rest of the executor. One row per (frame size,
// queues); the ratio column compares with one queue of the same size, measured in the same run.
//
// usage: generator_bench [--sizes 64,512,1518] [--queues 1,2,4,8] [--seconds 1] [--batch 2048]
//                        [--stride BYTES] [--pool 8] [--stores auto,plain,stream]
// --stride: slot bytes (default: the frame rounded up to 64; S_d's chain uses 128 at 64 B, with
// IPsec's headroom); --pool: batches each thread fills in turn (8 x 32768 x 128 B is 32 MiB a
// thread: cold memory, as the executor's pool); --stores: the generator's `stores:` modes to
// compare (rows of one size and queue count; the last column is each row's rate over the
// first mode's).
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/batch.h"
#include "core/config_node.h"
#include "io/generator_port.h"

using namespace gpunfv;

namespace {

std::vector<uint32_t> parse_list(const std::string& s) {
  std::vector<uint32_t> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(uint32_t(std::stoul(item)));
  return out;
}

// Frames per second over all queues of a generator of `size` bytes with `queues` queues.
double measure(uint32_t size, uint32_t queues, double seconds, uint32_t batch, uint32_t stride,
               uint32_t pool, const std::string& stores) {
  const std::string yaml = fmt::format(
      "name: gen\ntype: generator\nsize: {}\nflows: 65536\ncount: 1000000000000\nqueues: {}\n"
      "stores: {}\n", size, queues, stores);
  GeneratorPort gen(ConfigNode(YAML::Load(yaml), "generator_bench"), 0, {});
  if (stride == 0) stride = (size + 63) / 64 * 64;
  std::atomic<bool> stop{false};
  std::vector<uint64_t> frames(queues, 0);
  std::vector<std::thread> threads;
  for (uint16_t q = 0; q < queues; ++q)
    threads.emplace_back([&, q] {
      // Several batches in turn, as the pool hands them out: the frames land in cold memory.
      std::vector<std::unique_ptr<Batch>> batches;
      for (uint32_t i = 0; i < pool; ++i) batches.push_back(std::make_unique<Batch>(batch, stride, MemoryKind::host));
      uint64_t n = 0;
      for (size_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        Batch& b = *batches[i % batches.size()];
        b.set_count(0);
        while (b.count() < batch) n += gen.rx_queue_burst(q, b, batch - b.count());
      }
      frames[q] = n;
    });
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t total = 0;
  for (uint64_t n : frames) total += n;
  return double(total) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "64,512,1518", queues = "1,2,4,8", stores = "auto";
  double seconds = 1;
  uint32_t batch = 2048, stride = 0, pool = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--sizes") sizes = value;
    else if (key == "--queues") queues = value;
    else if (key == "--seconds") seconds = std::stod(value);
    else if (key == "--batch") batch = uint32_t(std::stoul(value));
    else if (key == "--stride") stride = uint32_t(std::stoul(value));
    else if (key == "--pool") pool = std::max<uint32_t>(1, uint32_t(std::stoul(value)));
    else if (key == "--stores") stores = value;
    else {
      fmt::print(stderr, "unknown option {}\n", key);
      return 2;
    }
  }
  std::vector<std::string> modes;
  {
    std::stringstream ss(stores);
    for (std::string m; std::getline(ss, m, ',');) modes.push_back(m);
  }
  fmt::print("generator_bench: {} hardware threads, {} s per row, batches of {}, {} per thread, "
             "stride {}\n", std::thread::hardware_concurrency(), seconds, batch, pool,
             stride ? std::to_string(stride) : std::string("frame rounded to 64"));
  fmt::print("{:>6} {:>6} {:>7} {:>10} {:>10} {:>10} {:>8} {:>9}\n", "size", "queues", "stores",
             "Mpps", "Gbit/s", "GB/s", "x 1 q", "x " + modes[0]);
  for (uint32_t size : parse_list(sizes)) {
    std::vector<double> one(modes.size(), 0);
    for (uint32_t q : parse_list(queues)) {
      double first = 0;
      for (size_t m = 0; m < modes.size(); ++m) {
        double pps = 0;
        try {
          pps = measure(size, q, seconds, batch, stride, pool, modes[m]);
        } catch (const std::exception& e) {
          fmt::print(stderr, "generator_bench: {}\n", e.what());
          return 2;
        }
        if (one[m] == 0) one[m] = pps;
        if (m == 0) first = pps;
        // Gbit/s on the wire: frame + 20 bytes of preamble and gap.
        fmt::print("{:>6} {:>6} {:>7} {:>10.2f} {:>10.1f} {:>10.2f} {:>8.2f} {:>9.2f}\n", size, q,
                   modes[m], pps / 1e6, pps * (size + 20) * 8 / 1e9, pps * size / 1e9, pps / one[m],
                   pps / first);
      }
    }
  }
}
