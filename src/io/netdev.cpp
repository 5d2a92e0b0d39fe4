#include "io/netdev.h"

#include <fmt/core.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace gpunfv {

void fail_errno(const ConfigNode& where, const std::string& what, int e, const char* capability) {
  std::string msg = what + ": " + std::strerror(e);
  if (e == EPERM || e == EACCES) {
    std::string lower = capability;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    msg += fmt::format(" (needs {}: run as root or grant it, e.g. setcap {}+ep)", capability, lower);
  }
  where.fail(msg);
}

namespace {

struct ControlSocket {
  int fd;
  explicit ControlSocket(const ConfigNode& where) : fd(socket(AF_INET, SOCK_DGRAM, 0)) {
    if (fd < 0) fail_errno(where, "cannot open a control socket", errno, "CAP_NET_ADMIN");
  }
  ~ControlSocket() { close(fd); }
};

ifreq request_for(const std::string& ifname) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, ifname.c_str(), std::min(ifname.size(), size_t(IFNAMSIZ - 1)));
  return ifr;
}

}  // namespace

uint32_t netdev_mtu(const ConfigNode& where, const std::string& ifname, std::optional<int> set) {
  ControlSocket ctl(where);
  ifreq ifr = request_for(ifname);
  if (set) {
    ifr.ifr_mtu = *set;
    if (ioctl(ctl.fd, SIOCSIFMTU, &ifr) != 0)
      fail_errno(where, "cannot set the MTU of '" + ifname + "'", errno, "CAP_NET_ADMIN");
  }
  if (ioctl(ctl.fd, SIOCGIFMTU, &ifr) != 0)
    fail_errno(where, "cannot read the MTU of '" + ifname + "'", errno, "CAP_NET_ADMIN");
  return uint32_t(ifr.ifr_mtu);
}

bool netdev_set_promiscuous(const ConfigNode& where, const std::string& ifname, bool on) {
  ControlSocket ctl(where);
  ifreq ifr = request_for(ifname);
  if (ioctl(ctl.fd, SIOCGIFFLAGS, &ifr) != 0)
    fail_errno(where, "cannot read the flags of '" + ifname + "'", errno, "CAP_NET_ADMIN");
  const bool was = (ifr.ifr_flags & IFF_PROMISC) != 0;
  if (was == on) return false;
  ifr.ifr_flags = short(on ? ifr.ifr_flags | IFF_PROMISC : ifr.ifr_flags & ~IFF_PROMISC);
  if (ioctl(ctl.fd, SIOCSIFFLAGS, &ifr) != 0)
    fail_errno(where, "cannot set promiscuous mode on '" + ifname + "'", errno, "CAP_NET_ADMIN");
  return true;
}

}  // namespace gpunfv
