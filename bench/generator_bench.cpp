// Generator port speed: each rx queue drained by its own thread into its own batch, as the
// executor's ingress threads do, without the rest of the executor. One row per (frame size,
// queues); the ratio column compares with one queue of the same size, measured in the same run.
//
// usage: generator_bench [--sizes 64,512,1518] [--queues 1,2,4,8] [--seconds 1] [--batch 2048]
#include <fmt/core.h>

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
double measure(uint32_t size, uint32_t queues, double seconds, uint32_t batch) {
  const std::string yaml = fmt::format(
      "name: gen\ntype: generator\nsize: {}\nflows: 65536\ncount: 1000000000000\nqueues: {}\n",
      size, queues);
  GeneratorPort gen(ConfigNode(YAML::Load(yaml), "generator_bench"), 0, {});
  const uint32_t stride = (size + 63) / 64 * 64;
  std::atomic<bool> stop{false};
  std::vector<uint64_t> frames(queues, 0);
  std::vector<std::thread> threads;
  for (uint16_t q = 0; q < queues; ++q)
    threads.emplace_back([&, q] {
      // Several batches in turn, as the pool hands them out: the frames land in cold memory.
      std::vector<std::unique_ptr<Batch>> batches;
      for (int i = 0; i < 8; ++i) batches.push_back(std::make_unique<Batch>(batch, stride, MemoryKind::host));
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
  std::string sizes = "64,512,1518", queues = "1,2,4,8";
  double seconds = 1;
  uint32_t batch = 2048;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--sizes") sizes = value;
    else if (key == "--queues") queues = value;
    else if (key == "--seconds") seconds = std::stod(value);
    else if (key == "--batch") batch = uint32_t(std::stoul(value));
    else {
      fmt::print(stderr, "unknown option {}\n", key);
      return 2;
    }
  }
  fmt::print("generator_bench: {} hardware threads, {} s per row, batches of {}\n",
             std::thread::hardware_concurrency(), seconds, batch);
  fmt::print("{:>6} {:>6} {:>10} {:>10} {:>10} {:>8}\n", "size", "queues", "Mpps", "Gbit/s", "GB/s",
             "x 1 q");
  for (uint32_t size : parse_list(sizes)) {
    double one = 0;
    for (uint32_t q : parse_list(queues)) {
      const double pps = measure(size, q, seconds, batch);
      if (q == 1 || one == 0) one = pps;
      // Gbit/s on the wire: frame + 20 bytes of preamble and gap.
      fmt::print("{:>6} {:>6} {:>10.2f} {:>10.1f} {:>10.2f} {:>8.2f}\n", size, q, pps / 1e6,
                 pps * (size + 20) * 8 / 1e9, pps * size / 1e9, pps / one);
    }
  }
}
