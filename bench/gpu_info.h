// What a GPU benchmark prints beside its figures, so that runs can be compared: the device, its
// SM and memory clocks (current, application and maximum) and why they are held down, its
// temperature and power, and the PCIe link it trains to (current and maximum generation and
// width). From NVML (libnvidia-ml, loaded at run time from the driver when present), else the
// CUDA runtime's peak clocks; the PCIe link also from sysfs. Empty JSON without a device.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace gpunfv::bench {

// The device benchmarks run on (CUDA device 0): name, clocks, link; {} without a device.
nlohmann::json gpu_device_json();
// One line for a table's header, e.g. "GPU: NVIDIA H200, SM 1980 MHz (max 1980), memory 3201
// MHz, PCIe gen 5 x16 (max gen 5 x16), 41 C, 120 W, clocks held by: none (NVML)".
std::string gpu_device_line(const nlohmann::json& dev);
// Only the clocks, for sampling right after timed GPU work: {sm_mhz, mem_mhz, ...}.
nlohmann::json gpu_clocks_json();

}  // namespace gpunfv::bench
