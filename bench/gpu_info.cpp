#include "gpu_info.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "gpu/device.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv::bench {

namespace {

// NVML's C interface, the part used here (nvml.h is not needed: the ABI is stable and the
// library comes with the driver, not the toolkit).
using NvmlDevice = void*;
enum : unsigned { kClockGraphics = 0, kClockSm = 1, kClockMem = 2 };

struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*clock)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*max_clock)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*app_clock)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*link_gen)(NvmlDevice, unsigned*) = nullptr;
  int (*link_width)(NvmlDevice, unsigned*) = nullptr;
  int (*max_link_gen)(NvmlDevice, unsigned*) = nullptr;
  int (*max_link_width)(NvmlDevice, unsigned*) = nullptr;
  int (*temperature)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*power)(NvmlDevice, unsigned*) = nullptr;
  int (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlDevice dev = nullptr;

  template <typename F>
  void sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
  }
  explicit Nvml(const std::string& bus_id) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    sym(init, "nvmlInit_v2");
    sym(by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(clock, "nvmlDeviceGetClockInfo");
    sym(max_clock, "nvmlDeviceGetMaxClockInfo");
    sym(app_clock, "nvmlDeviceGetApplicationsClock");
    sym(link_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    sym(link_width, "nvmlDeviceGetCurrPcieLinkWidth");
    sym(max_link_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    sym(max_link_width, "nvmlDeviceGetMaxPcieLinkWidth");
    sym(temperature, "nvmlDeviceGetTemperature");
    sym(power, "nvmlDeviceGetPowerUsage");
    sym(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!init || !by_bus_id || init() != 0 || by_bus_id(bus_id.c_str(), &dev) != 0) dev = nullptr;
  }
  ~Nvml() {
    if (lib) dlclose(lib);
  }
  bool ok() const { return dev != nullptr; }
  // A value from f, or null where NVML lacks it.
  template <typename F, typename... A>
  nlohmann::json get(F f, A... a) const {
    unsigned v = 0;
    if (f && f(dev, a..., &v) == 0) return v;
    return nullptr;
  }
};

// NVML's clock-reason bits (nvmlClocksEventReasons), by name.
std::string reason_names(unsigned long long r) {
  static const std::pair<unsigned long long, const char*> names[] = {
      {0x1, "gpu_idle"},           {0x2, "application_clocks"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},        {0x10, "sync_boost"},        {0x20, "sw_thermal"},
      {0x40, "hw_thermal"},        {0x80, "hw_power_brake"},    {0x100, "display_clocks"}};
  std::string s;
  for (const auto& [bit, name] : names)
    if (r & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "none" : s;
}

std::string sysfs(const std::string& bus_id, const char* file) {
  std::string id = bus_id;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  std::ifstream f("/sys/bus/pci/devices/" + id + "/" + file);
  std::string v;
  std::getline(f, v);
  return v;
}

std::string bus_id_of_device0() {
#if GPUNFV_HAVE_CUDA
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, 0) == cudaSuccess) {
    // CUDA gives "0000:4B:00.0"; sysfs and NVML take that form too.
    return id;
  }
  cudaGetLastError();
#endif
  return {};
}

nlohmann::json clocks(const Nvml& n) {
  nlohmann::json j;
  j["sm_mhz"] = n.get(n.clock, kClockSm);
  j["mem_mhz"] = n.get(n.clock, kClockMem);
  j["graphics_mhz"] = n.get(n.clock, kClockGraphics);
  j["temperature_c"] = n.get(n.temperature, 0u);
  const nlohmann::json mw = n.get(n.power);
  j["power_w"] = mw.is_null() ? mw : nlohmann::json(mw.get<unsigned>() / 1000.0);
  unsigned long long r = 0;
  if (n.reasons && n.reasons(n.dev, &r) == 0) j["clocks_held_by"] = reason_names(r);
  return j;
}

}  // namespace

nlohmann::json gpu_device_json() {
  if (!cuda_device_available()) return {};
  nlohmann::json j;
  const std::string bus = bus_id_of_device0();
  j["pci_bus_id"] = bus;
#if GPUNFV_HAVE_CUDA
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
    j["name"] = p.name;
    j["sms"] = p.multiProcessorCount;
    j["memory_gib"] = p.totalGlobalMem / double(1ull << 30);
  }
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
    j["cuda_peak_sm_mhz"] = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
    j["cuda_peak_mem_mhz"] = khz / 1000;
  cudaGetLastError();
#endif
  j["pcie_sysfs"] = {{"speed", sysfs(bus, "current_link_speed")},
                     {"width", sysfs(bus, "current_link_width")},
                     {"max_speed", sysfs(bus, "max_link_speed")},
                     {"max_width", sysfs(bus, "max_link_width")}};
  Nvml n(bus);
  j["nvml"] = n.ok();
  if (n.ok()) {
    j["clocks"] = clocks(n);
    j["max_sm_mhz"] = n.get(n.max_clock, kClockSm);
    j["max_mem_mhz"] = n.get(n.max_clock, kClockMem);
    j["app_sm_mhz"] = n.get(n.app_clock, kClockSm);
    j["app_mem_mhz"] = n.get(n.app_clock, kClockMem);
    j["pcie"] = {{"gen", n.get(n.link_gen)}, {"width", n.get(n.link_width)},
                 {"max_gen", n.get(n.max_link_gen)}, {"max_width", n.get(n.max_link_width)}};
  }
  return j;
}

nlohmann::json gpu_clocks_json() {
  if (!cuda_device_available()) return {};
  Nvml n(bus_id_of_device0());
  return n.ok() ? clocks(n) : nlohmann::json();
}

std::string gpu_device_line(const nlohmann::json& d) {
  if (d.is_null() || d.empty()) return "GPU: none";
  auto v = [&](const nlohmann::json& j, const char* k) {
    return j.contains(k) && !j[k].is_null() ? j[k].dump() : std::string("?");
  };
  std::string s = fmt::format("GPU: {} ({}), ", d.value("name", std::string("?")), v(d, "pci_bus_id"));
  if (d.value("nvml", false)) {
    const auto& c = d["clocks"];
    const auto& l = d["pcie"];
    s += fmt::format("SM {} MHz (max {}, application {}), memory {} MHz (max {}), PCIe gen {} x{} "
                     "(max gen {} x{}), {} C, {} W, clocks held by: {} (NVML)",
                     v(c, "sm_mhz"), v(d, "max_sm_mhz"), v(d, "app_sm_mhz"), v(c, "mem_mhz"),
                     v(d, "max_mem_mhz"), v(l, "gen"), v(l, "width"), v(l, "max_gen"),
                     v(l, "max_width"), v(c, "temperature_c"), v(c, "power_w"),
                     c.value("clocks_held_by", std::string("?")));
  } else {
    s += fmt::format("peak SM {} MHz, peak memory {} MHz (CUDA attributes; NVML not available)",
                     v(d, "cuda_peak_sm_mhz"), v(d, "cuda_peak_mem_mhz"));
  }
  const auto& p = d["pcie_sysfs"];
  s += fmt::format("; PCIe link (sysfs) {} x{}, max {} x{}", p.value("speed", "?"),
                   p.value("width", "?"), p.value("max_speed", "?"), p.value("max_width", "?"));
  return s;
}

}  // namespace gpunfv::bench
