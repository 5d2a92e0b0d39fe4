// Helpers for chain tests: write a YAML configuration into a temporary folder.
#pragma once

#include <filesystem>
#include <fstream>
#include <cstdint>
#include <string>

namespace gpunfv::testing {

inline std::string source_dir() { return GPUNFV_SOURCE_DIR; }

// A fresh temporary folder per test.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gpunfv-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// The two outbound SAs the chain tests' IPsec gateways use (YAML list items, 6 spaces in); the
// second matches `second_match` (default: all the rest).
inline std::string test_esp_sas(const std::string& second_match = "0.0.0.0/0") {
  return "      - {spi: 0x3001, enc_key: 4a0e7ef1c6b2d9a0135f7e8c2b91d4a6c0ffee01, auth_key: "
         "7f3c9a2e5b8d1f4a6c0e2b9d8f7a1c3e5b2d4f60, local: 192.168.1.1, remote: 10.52.0.1, match: "
         "200.57.7.0/24}\n"
         "      - {spi: 0x3002, enc_key: 91b3d5f7092b4d6f8193a5c7e9fb1d3fc0ffee02, auth_key: "
         "0d1c2b3a49586776859a4b3c2d1e0f1a2b3c4d5e, local: 192.168.1.1, remote: 10.1.0.1, match: " +
         second_match + "}\n";
}

// G-NET's S_d (firewall, IPsec outbound, NIDS, router) over the SIP capture into two discard
// ports, written into a fresh folder `dir_name`; returns the configuration's path.
inline std::string write_sd_chain_config(const std::string& dir_name, uint32_t batch_size) {
  auto dir = temp_dir(dir_name);
  const std::string d = source_dir();
  write_file(dir / "fw.rules",
             "@10.0.0.0/12 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n");
  return write_file(dir / "c.yaml", "ports:\n"
                    "  - {name: in, type: pcap, rx: " + d + "/data/traces/SIP_CALL_RTP_G711.pcap}\n"
                    "  - {name: p1, type: discard}\n"
                    "  - {name: p2, type: discard}\n"
                    "nfs:\n"
                    "  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}\n"
                    "  - name: esp\n"
                    "    type: ipsec\n"
                    "    direction: outbound\n"
                    "    sas:\n" + test_esp_sas() +
                    "  - name: ids\n"
                    "    type: nids\n"
                    "    rules: [" + d + "/data/nids/et_open_2024-04-21/emerging-voip.rules.gz]\n"
                    "    action: alert\n"
                    "  - name: r1\n"
                    "    type: router\n"
                    "    routes: {file: " + d + "/data/router/bart_ipv4_random5000.txt, spread: [p1, p2]}\n"
                    "chains:\n"
                    "  - {from: in, path: [fw, esp, ids, r1]}\n"
                    "settings: {batch_size: " + std::to_string(batch_size) + ", batches: 4}\n");
}

}  // namespace gpunfv::testing
