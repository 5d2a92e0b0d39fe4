// Linux interface settings shared by the afpacket and afxdp ports: MTU and promiscuous mode
// through ioctl (SIOCGIFMTU/SIOCSIFMTU, SIOCGIFFLAGS/SIOCSIFFLAGS).
// Errors: ConfigError at `where`, naming the capability a refusal means (CAP_NET_ADMIN).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/config_node.h"

namespace gpunfv {

// Sets the MTU of `ifname` when `set` has a value, then returns the interface's MTU.
uint32_t netdev_mtu(const ConfigNode& where, const std::string& ifname, std::optional<int> set);

// Sets IFF_PROMISC on `ifname` (what PACKET_MR_PROMISC does for a packet socket, for sockets
// that have no membership call, such as AF_XDP). Returns false if the flag was already set.
bool netdev_set_promiscuous(const ConfigNode& where, const std::string& ifname, bool on);

// Throws ConfigError at `where` for errno `e`, naming `capability` when it means no permission.
[[noreturn]] void fail_errno(const ConfigNode& where, const std::string& what, int e,
                             const char* capability);

}  // namespace gpunfv
