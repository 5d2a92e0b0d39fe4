// `type: afxdp` port: AF_XDP sockets through libxdp (Debian libxdp-dev) on any Linux interface.
// Built when libxdp and libbpf are found (GPUNFV_HAVE_AFXDP_PORT); otherwise refused with
// that reason.
//
//   - name: x0
//     type: afxdp
//     interface: veth0
//     queues: 1            # one socket per rx/tx queue id 0..queues-1 (RSS spreads flows)
//     bind: auto           # auto: zero-copy where the driver allows, else copy | zerocopy | copy
//     frames: 8192         # UMEM frames of 2048 B (default 8192; 16 MiB)
//     umem_from: x1        # share the UMEM of an earlier afxdp port (zero-copy forward)
//     mtu: 1500            # set the MTU (CAP_NET_ADMIN); default: keep
//     promiscuous: true    # IFF_PROMISC while the port is open (default true)
//     rx: true             # default true
//     tx: true             # default true
//
// libxdp loads its default XDP program (redirect to the XSK map by rx queue) and attaches it
// natively where the driver supports XDP, in generic (skb) mode otherwise. describe() says
// which bind was obtained ("zero-copy" or "copy") per port.
//
// UMEM: one area of frames per port, or shared between ports (`umem_from:`); then a frame
// received on one socket can be posted on the other's tx ring unchanged: zero_copy() of kind
// "afxdp-umem:<id>" matches only ports that share a UMEM. Completed tx frames go back to the
// shared free list, from which both sockets' fill rings are refilled.
//
// Errors (ConfigError): missing interface, no permission (AF_XDP and loading XDP programs need
// CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW, on older kernels CAP_SYS_ADMIN), a bind mode the
// driver refuses.
#pragma once

#include <memory>

#include "core/config_node.h"
#include "io/port.h"

namespace gpunfv {

std::unique_ptr<Port> make_afxdp_port(const ConfigNode& node, uint16_t id);

}  // namespace gpunfv
