// Capture reading: the input as a capture file (pcap or pcapng) behind a `type: pcap` rx port
// replayed twice (repeat: 2), once preloaded and once streamed from disk. ConfigError is the
// expected answer to a file that cannot be read. A capture the preloading port accepts must
// stream as the same frames (lengths, bytes, timestamps), and the second round must not go back
// in time before the first round's last frame.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "io/pcap_port.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

struct Got {
  std::vector<uint16_t> len;
  std::vector<uint64_t> ns;
  std::vector<uint8_t> bytes;
};

constexpr uint32_t kStride = 2048;

Got read_all(PcapPort& port) {
  Got g;
  Batch b(64, kStride, MemoryKind::host);
  while (!port.rx_done() && g.len.size() < 20000) {
    b.set_count(0);
    port.rx_burst(b, 64);
    const BatchView v = b.view();
    for (uint32_t i = 0; i < v.count; ++i) {
      FUZZ_CHECK(v.port[i] == 0);
      g.len.push_back(v.len[i]);
      g.ns.push_back(v.wire_ns[i]);
      const uint8_t* p = v.data.framework_data() + size_t(i) * kStride;
      g.bytes.insert(g.bytes.end(), p, p + std::min<uint32_t>(v.len[i], kStride));
    }
  }
  return g;
}

std::unique_ptr<PcapPort> open(const std::string& path, bool preload) {
  std::string yaml = "{name: in, type: pcap, rx: '" + path + "', repeat: 2, preload: " +
                     (preload ? "true" : "false") + "}";
  return std::make_unique<PcapPort>(
      ConfigNode(YAML::Load(yaml), (scratch_dir() / "c.yaml").string()), 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = write_file("in.pcap", data, size);
  std::unique_ptr<PcapPort> preloaded;
  try {
    preloaded = open(path, true);
  } catch (const ConfigError&) {
    try {
      auto streamed = open(path, false);  // may open (the error lies further in): reads a prefix
      read_all(*streamed);
    } catch (const ConfigError&) {
    }
    return 0;
  }
  FUZZ_CHECK(preloaded->max_frame_bytes() >= 64 && preloaded->max_frame_bytes() <= 0xFFFF);
  Got a = read_all(*preloaded);
  std::unique_ptr<PcapPort> streamed = open(path, false);  // the same file opened fine above
  Got b = read_all(*streamed);
  FUZZ_CHECK(a.len == b.len && a.ns == b.ns && a.bytes == b.bytes);
  if (a.len.size() < 20000) {
    FUZZ_CHECK(a.len.size() % 2 == 0);
    const size_t n = a.len.size() / 2;
    if (n > 0) {
      const uint64_t first_max = *std::max_element(a.ns.begin(), a.ns.begin() + n);
      const uint64_t second_min = *std::min_element(a.ns.begin() + n, a.ns.end());
      FUZZ_CHECK(second_min >= first_max);
    }
  }
  return 0;
}
