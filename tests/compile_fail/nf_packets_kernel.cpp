// Must compile: the control for the kernel files beside it, an NF kernel taking its NfPackets,
// its table view, an IsoSpan and plain values (nf/nf_kernel.h).
#include "nf/nf_kernel.h"
#include "nf/router/router_logic.h"

namespace gpunfv {

void scan_kernel(NfPackets<> packets, RouterView routes, IsoSpan<uint32_t> counts, uint32_t n) {}
void rewrite_kernel(NfPackets<PacketAccess::rewrite> packets, uint8_t ttl) {}
constexpr bool checked = (check_nf_kernel(scan_kernel), check_nf_kernel(rewrite_kernel), true);

}  // namespace gpunfv
