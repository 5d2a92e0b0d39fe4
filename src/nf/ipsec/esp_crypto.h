// The IPsec NF's per-packet ESP kernels on the GPU (ipsec.cu runs the ordered passes around
// them): outbound encapsulation, inbound decapsulation, with AES's round table staged in
// shared memory. Errors: those of the launches (gpu/gpu_calls.h).
#pragma once

#include <cstdint>

#include "gpu/device_counters.h"
#include "gpu/stream.h"
#include "nf/ipsec/esp.h"
#include "nf/nf_packets.h"

namespace gpunfv::esp {

// Outbound's device count, kept as each packet finishes (a launch fewer per batch than a count
// kernel after it): packets passed, per SA slot, as IpsecGateway counts them on the host;
// bypassed packets (kNoSa) count nowhere. An empty `counts` counts nothing.
struct PassedPerSa {
  DeviceCountersRef counts;
  uint32_t sas = 0;
};

// Encapsulates the packets at this NF (outbound step 3; selection and numbering have run).
// Batches of up to 1,024 packets take 8 lanes a packet, larger ones one; `want_lanes`
// (GPUNFV_IPSEC_LANES: 1, 2, 4 or 8) overrides, 0 keeps that choice.
void launch_encapsulation(const NfPackets<PacketAccess::rewrite>& p, const EspView& v,
                          const GpuStream& s, uint32_t want_lanes, const PassedPerSa& passed);

// Verifies, decrypts and strips the packets at this NF (inbound step 1).
void launch_decapsulation(const NfPackets<PacketAccess::rewrite>& p, const EspView& v,
                          const GpuStream& s);

}  // namespace gpunfv::esp
