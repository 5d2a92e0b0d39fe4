// IPsec SA configuration: the input as the YAML of one `type: ipsec` NF
// (IpsecGateway::from_config). A YAML syntax error (the configuration loader reports it as a
// ConfigError) and ConfigError are the expected answers to bad input. An accepted gateway
// must never show a configured key: no enc_key or auth_key value of the input may appear in
// its describe(), command("sas") or report.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config_node.h"
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "nf/ipsec/ipsec.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return 0;
  }
  std::unique_ptr<IpsecGateway> nf;
  try {
    nf = IpsecGateway::from_config(ConfigNode(root, "fuzz.yaml"));
  } catch (const ConfigError&) {
    return 0;
  }
  FUZZ_CHECK(nf != nullptr);
  FUZZ_CHECK(nf->table().size() > 0);
  nlohmann::json j;
  nf->report(j);
  const std::string shown = nf->describe() + nf->command("sas") + nf->command("describe") + j.dump();
  for (const auto& sa : root["sas"])
    for (const char* key : {"enc_key", "auth_key"}) {
      std::string value = sa[key].as<std::string>();
      FUZZ_CHECK(value.size() >= 40);
      FUZZ_CHECK(shown.find(value.substr(value.size() - 40)) == std::string::npos);
    }
  return 0;
}
