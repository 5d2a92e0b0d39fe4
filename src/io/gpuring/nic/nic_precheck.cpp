#include "io/gpuring/nic/nic_precheck.h"

#include <fmt/core.h>

#include <cctype>
#include <filesystem>
#include <fstream>

namespace gpunfv::gpuring {

namespace {

namespace fs = std::filesystem;

// Parses `digits` hex digits (exactly) from the front of `s`.
std::optional<uint32_t> hex_field(std::string_view& s, size_t digits) {
  if (s.size() < digits) return std::nullopt;
  uint32_t v = 0;
  for (size_t i = 0; i < digits; ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    if (c >= '0' && c <= '9') v = v * 16 + uint32_t(c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + uint32_t(c - 'a' + 10);
    else return std::nullopt;
  }
  s.remove_prefix(digits);
  return v;
}

bool take(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

// The first whitespace-separated number of a sysfs file (hex with 0x), or nullopt.
std::optional<uint64_t> read_number(const fs::path& p) {
  std::ifstream in(p);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  try {
    return std::stoull(word, nullptr, 0);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> canonical_pci_address(std::string_view text) {
  std::string_view s = text;
  // Domain present when there are two colons.
  const bool has_domain = s.find(':') != s.rfind(':');
  uint32_t domain = 0;
  if (has_domain) {
    auto d = hex_field(s, 4);
    if (!d || !take(s, ':')) return std::nullopt;
    domain = *d;
  }
  auto bus = hex_field(s, 2);
  if (!bus || !take(s, ':')) return std::nullopt;
  auto dev = hex_field(s, 2);
  if (!dev || *dev > 0x1f || !take(s, '.')) return std::nullopt;
  auto fn = hex_field(s, 1);
  if (!fn || *fn > 7 || !s.empty()) return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, *bus, *dev, *fn);
}

bool is_82599_device_id(uint32_t id) {
  switch (id) {
    case 0x10F7: case 0x1514: case 0x1517: case 0x10F8: case 0x10F9: case 0x10FB: case 0x152A:
    case 0x1529: case 0x1507: case 0x154D: case 0x154A: case 0x154F: case 0x1557: case 0x1558:
    case 0x10FC: case 0x151C:
      return true;
    default:
      return false;
  }
}

std::string check_nic_sysfs(const std::string& address, uint64_t bar0_bytes_needed, const std::string& sysfs_root) {
  const fs::path dev = fs::path(sysfs_root) / "bus/pci/devices" / address;
  std::error_code ec;
  if (!fs::exists(dev, ec))
    return fmt::format("no PCI device {} ({} does not exist): give the address lspci -D shows for the 82599 port",
                       address, dev.string());
  const auto vendor = read_number(dev / "vendor");
  const auto device = read_number(dev / "device");
  if (!vendor || !device) return fmt::format("PCI device {}: cannot read its vendor/device ids in {}", address, dev.string());
  if (*vendor != 0x8086 || !is_82599_device_id(uint32_t(*device)))
    return fmt::format("PCI device {} is {:04x}:{:04x}, not an Intel 82599 (X520): the ring plan programs 82599 "
                       "registers only",
                       address, *vendor, *device);
  const fs::path driver = dev / "driver";
  if (!fs::is_symlink(driver, ec))
    return fmt::format("PCI device {} is bound to no driver: bind it to vfio-pci (dpdk-devbind.py -b vfio-pci {})",
                       address, address);
  const std::string bound = fs::read_symlink(driver, ec).filename().string();
  if (bound != "vfio-pci")
    return fmt::format("PCI device {} is bound to {}, not vfio-pci: bind it with dpdk-devbind.py -b vfio-pci {} "
                       "(the kernel's ixgbe driver must let go of it)",
                       address, bound, address);
  if (!fs::exists(dev / "iommu_group", ec))
    return fmt::format("PCI device {} is in no IOMMU group: turn the IOMMU on (intel_iommu=on or amd_iommu=on; "
                       "iommu=pt is fine). In vfio's no-IOMMU mode the NIC's DMA uses physical addresses, and the "
                       "GPU memory's physical addresses cannot be learned from user space",
                       address);
  std::ifstream res(dev / "resource");
  uint64_t start = 0, end = 0;
  std::string s_start, s_end;
  if (!(res >> s_start >> s_end)) return fmt::format("PCI device {}: cannot read its BAR table ({})", address,
                                                     (dev / "resource").string());
  try {
    start = std::stoull(s_start, nullptr, 0);
    end = std::stoull(s_end, nullptr, 0);
  } catch (...) {
    return fmt::format("PCI device {}: malformed BAR table in {}", address, (dev / "resource").string());
  }
  const uint64_t bar0 = end > start ? end - start + 1 : 0;
  if (bar0 < bar0_bytes_needed)
    return fmt::format("PCI device {}: BAR0 is {} bytes, the ring registers need {} (is it an 82599 physical "
                       "function, with its memory BAR enabled?)",
                       address, bar0, bar0_bytes_needed);
  return "";
}

}  // namespace gpunfv::gpuring
