// The configuration loader: the input as a gpunfv YAML configuration (load_runtime_config),
// written into a private folder that also holds small route, rule and capture files for it to
// name (routes.txt, prefixes.txt, fw.rules, ids.rules, in.pcap). ConfigError is the expected
// answer to any bad configuration; any other exception, a crash or undefined behaviour is a
// finding. A loaded configuration must be consistent: every chain's ingress and NFs exist.
//
// The loader opens what the configuration names (tx captures and alert logs are created), so
// inputs stay inside the folder: one with a path separator (a '/' outside an a.b.c.d/len
// prefix, or a backslash) is refused, as is one naming a port type that reaches a real
// interface or device (afpacket, afxdp, dpdk, gpuring and its nic:).
#include <cctype>
#include <cstdint>
#include <exception>
#include <set>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/error.h"
#include "fuzz/fuzz_util.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

// A capture of two Ethernet/IPv4/UDP frames (classic pcap, microsecond timestamps).
std::string tiny_pcap() {
  std::string p("\xd4\xc3\xb2\xa1\x02\x00\x04\x00", 8);
  p += std::string(8, '\0');
  p += std::string("\xff\xff\x00\x00\x01\x00\x00\x00", 8);
  for (int k = 0; k < 2; ++k) {
    std::string f(42 + 8, '\0');
    f[12] = 0x08, f[14] = 0x45, f[17] = 36, f[22] = 64, f[23] = 17;
    f[26] = 10, f[29] = 1, f[30] = char(192), f[31] = char(168), f[32] = 1, f[33] = char(k + 1);
    f[36] = 0x13, f[37] = char(0xc4), f[39] = 16;
    std::string h(16, '\0');
    h[0] = char(k + 1), h[8] = h[12] = char(f.size());
    p += h + f;
  }
  return p;
}

bool refused(std::string_view text) {
  if (text.find('\\') != std::string_view::npos) return true;
  for (size_t k = text.find('/'); k != std::string_view::npos; k = text.find('/', k + 1))
    if (k == 0 || k + 1 == text.size() || !std::isdigit(uint8_t(text[k - 1])) ||
        !std::isdigit(uint8_t(text[k + 1])))
      return true;  // a '/' outside a prefix such as 10.0.0.0/8
  for (std::string_view word : {"afpacket", "afxdp", "dpdk", "nic", "interface", "gpuring"})
    if (text.find(word) != std::string_view::npos) return true;
  return false;
}

const std::set<std::string> kFixtures = {"routes.txt", "prefixes.txt", "fw.rules", "ids.rules",
                                         "in.pcap"};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  write_file("routes.txt", "10.0.0.0/8 p1\n192.168.0.0/16 p2\n0.0.0.0/0 p1\n");
  write_file("prefixes.txt", "10.0.0.0/8\n172.16.0.0/12\n192.168.1.0/24\n");
  write_file("fw.rules",
             "@10.0.0.0/8 0.0.0.0/0 0 : 65535 22 : 22 0x06/0xFF 0x0000/0x0000 drop\n"
             "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 0x0000/0x0000 accept\n");
  write_file("ids.rules",
             "alert udp any any -> any any (msg:\"a\"; content:\"abc\"; sid:1;)\n"
             "alert tcp any any -> any any (msg:\"b\"; content:\"|00 01|\"; nocase; sid:2;)\n");
  write_file("in.pcap", tiny_pcap());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int init = LLVMFuzzerInitialize(nullptr, nullptr);  // the replay driver's way
  (void)init;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (refused(text)) return -1;
  const std::string path = write_file("fuzz.yaml", data, size);
  try {
    RuntimeConfig rc = load_runtime_config(path);
    for (const Chain& c : rc.chains) {
      FUZZ_CHECK(c.from < rc.ports.size());
      FUZZ_CHECK(!c.path.empty());
      for (uint16_t nf : c.path) FUZZ_CHECK(nf < rc.nfs.size());
      FUZZ_CHECK(c.to == kNoPort || c.to < rc.ports.size());
    }
    for (const auto& nf : rc.nfs) FUZZ_CHECK(nf != nullptr && !nf->describe().empty());
  } catch (const ConfigError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: load_runtime_config threw a non-ConfigError: %s\n", e.what());
    FUZZ_CHECK(false);
  }
  // Whatever the configuration created (tx captures, alert logs) goes.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(scratch_dir(), ec))
    if (!kFixtures.count(e.path().filename().string())) std::filesystem::remove_all(e.path(), ec);
  return 0;
}
