// Helpers shared by the port tests: YAML-built config nodes, a scratch folder, and draining
// a port into plain vectors.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/config_node.h"
#include "io/port.h"

namespace gpunfv::test {

// A config node as if read from `file` (relative paths resolve against its folder).
inline ConfigNode yaml_node(const std::string& text, const std::string& file = "/tmp/cfg.yaml") {
  return ConfigNode(YAML::Load(text), file);
}

inline std::string trace_path(const std::string& name) {
  return std::string(GPUNFV_SOURCE_DIR) + "/data/traces/" + name;
}

// A fresh folder under the system temp folder, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("gpunfv_io_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // A config file path inside the folder, so relative paths in the YAML resolve here.
  std::string config() const { return file("cfg.yaml"); }

 private:
  std::filesystem::path path_;
};

// Everything a port delivered, frame by frame.
struct Received {
  std::vector<std::vector<uint8_t>> bytes;  // the slot's bytes, min(len, stride) of them
  std::vector<uint16_t> len;
  std::vector<uint16_t> port;
  std::vector<uint64_t> wire_ns;
  size_t size() const { return len.size(); }
};

inline void append_batch(const Batch& b, uint32_t first, Received& out) {
  BatchView v = b.view();
  for (uint32_t i = first; i < b.count(); ++i) {
    const uint8_t* slot = v.data.framework_data() + size_t(i) * v.stride;
    uint32_t copied = std::min<uint32_t>(v.len[i], v.stride);
    out.bytes.emplace_back(slot, slot + copied);
    out.len.push_back(v.len[i]);
    out.port.push_back(v.port[i]);
    out.wire_ns.push_back(v.wire_ns[i]);
  }
}

// Reads `port` until rx_done() (or `limit` frames).
inline Received drain(Port& port, uint32_t stride = 2048, uint32_t capacity = 64,
                      uint64_t limit = UINT64_MAX) {
  Batch b(capacity, stride, MemoryKind::host);
  Received out;
  for (uint64_t calls = 0; out.size() < limit; ++calls) {
    if (calls > 100'000'000) {
      ADD_FAILURE() << "port never finished";
      break;
    }
    b.set_count(0);
    uint64_t left = limit - out.size();
    uint32_t n = port.rx_burst(b, uint32_t(std::min<uint64_t>(capacity, left)));
    EXPECT_EQ(n, b.count());
    append_batch(b, 0, out);
    if (n == 0 && port.rx_done()) break;
  }
  return out;
}

}  // namespace gpunfv::test
