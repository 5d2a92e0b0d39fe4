// The NF abstraction (G-NET section 6, BESS modules, FastClick elements): a small class per NF
// with init (from_config + prepare), process (per-packet logic, one source for both backends)
// and command (runtime queries).
//
// An NF owns its tables on the host. Its per-packet logic is a __host__ __device__ function of
// a trivially copyable view and a PacketRef; it returns DropReason::none to pass the packet on,
// or the reason to drop it. The framework runs it: process() on the CPU backend over a range of
// a host batch, process_gpu() as a kernel over a device batch (src/nf/run_per_packet.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/batch.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/stream.h"
#endif

namespace gpunfv {

enum class Backend { cpu, gpu };

class NetworkFunction {
 public:
  explicit NetworkFunction(std::string name) : name_(std::move(name)) {}
  virtual ~NetworkFunction() = default;
  NetworkFunction(const NetworkFunction&) = delete;
  NetworkFunction& operator=(const NetworkFunction&) = delete;

  const std::string& name() const { return name_; }
  virtual std::string_view type() const = 0;

  // Builds backend state once before packets flow (e.g. uploads tables to the device).
  virtual void prepare(Backend backend) = 0;

  // CPU backend: runs the NF on packets [begin, end) of `b` whose next_nf equals `position`
  // and whose verdict is none. Thread-safe: workers call it concurrently on disjoint ranges.
  virtual void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const = 0;

#if GPUNFV_HAVE_CUDA
  // GPU backend: the same over a device batch, launched on `stream`; returns at once.
  virtual void process_gpu(const BatchView& device_batch, uint8_t position,
                           const GpuStream& stream) const = 0;
#endif

  // Ports this NF may send packets to (validated to have a tx side at load time).
  virtual std::vector<uint16_t> egress_ports() const { return {}; }

  // Runtime command (`gpunfv` control surface): returns a human-readable answer.
  virtual std::string command(std::string_view cmd) const;

  // One line for the startup summary.
  virtual std::string describe() const = 0;

 private:
  std::string name_;
};

}  // namespace gpunfv
