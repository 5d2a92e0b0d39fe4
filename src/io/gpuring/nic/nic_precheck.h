// What a gpuring port's real NIC (`nic:`, dpdk_nic.h) needs that can be checked before DPDK's
// EAL starts, from sysfs alone: the PCI address is well formed, the device exists, is an Intel
// 82599 (ixgbe), is bound to vfio-pci, sits in an IOMMU group, and its BAR0 covers the
// registers the ring plan writes. Each failure is one sentence naming what is missing and how
// to provide it. Pure apart from reading files under `sysfs_root` (tests pass a fake tree).
//
// Errors: none thrown; check_nic_sysfs returns the failure text ("" when everything holds).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpunfv::gpuring {

// "dddd:bb:dd.f" (domain, bus, device <= 0x1f, function <= 7; hex, either case) or "bb:dd.f"
// (domain 0), as the canonical lower-case "dddd:bb:dd.f"; nullopt when malformed.
std::optional<std::string> canonical_pci_address(std::string_view text);

// Whether an Intel device id is an 82599 (ixgbe_type.h's IXGBE_DEV_ID_82599_*, X520 included).
bool is_82599_device_id(uint32_t device_id);

// `address` canonical; `bar0_bytes_needed`: the highest register offset written, plus 4.
std::string check_nic_sysfs(const std::string& address, uint64_t bar0_bytes_needed,
                            const std::string& sysfs_root = "/sys");

}  // namespace gpunfv::gpuring
