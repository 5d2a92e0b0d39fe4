// NF types by name. Each NF registers itself in its own source file with one line, as BESS
// modules do with ADD_MODULE and FastClick elements with EXPORT_ELEMENT:
//
//   GPUNFV_REGISTER_NF("router", Router);
//
// The class needs `static std::unique_ptr<Class> from_config(const ConfigNode&)`, or, for an NF
// that chooses egress ports, `from_config(const ConfigNode&, const PortIdOf&)`. The
// configuration layer builds each `nfs:` entry through the registry (config/config.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config_node.h"
#include "nf/network_function.h"

namespace gpunfv {

struct NfContext {
  // Port id of a port name, nullopt if no such port (NFs that choose egress ports use it).
  std::function<std::optional<uint16_t>(const std::string&)> port_id_of;
};

using NfFactory = std::unique_ptr<NetworkFunction> (*)(const ConfigNode&, const NfContext&);

class NfRegistry {
 public:
  // Registers `type`; returns false (and keeps the first) if the name is taken.
  static bool add(const std::string& type, NfFactory factory);
  // The factory of `type`, nullptr if none is registered.
  static NfFactory find(const std::string& type);
  // Every registered type, sorted.
  static std::vector<std::string> types();

  // Every add() so far, in call order, with whether it was taken (a plugin's loader reads
  // what loading the library registered: nf/nf_plugin.h).
  struct Attempt {
    std::string type;
    bool added;
  };
  static std::vector<Attempt> attempts(size_t from = 0);
};

template <class Nf>
std::unique_ptr<NetworkFunction> make_registered_nf(const ConfigNode& node, const NfContext& ctx) {
  if constexpr (requires { Nf::from_config(node, ctx.port_id_of); })
    return Nf::from_config(node, ctx.port_id_of);
  else
    return Nf::from_config(node);
}

}  // namespace gpunfv

#define GPUNFV_REGISTER_NF(type, Class)                                    \
  [[maybe_unused]] static const bool gpunfv_nf_registered_##Class =      \
      ::gpunfv::NfRegistry::add(type, &::gpunfv::make_registered_nf<Class>)
