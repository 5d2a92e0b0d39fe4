// `type: dpdk` port: a DPDK ethdev, a real NIC bound to vfio-pci or one of DPDK's virtual
// devices (net_ring, net_pcap, net_af_packet, net_memif). Built when libdpdk is found
// (GPUNFV_HAVE_DPDK_PORT); otherwise the type is refused with that reason.
//
//   - name: nic0
//     type: dpdk
//     device: 0000:3b:00.0      # PCI address, or a vdev name: net_ring0, net_pcap0, ...
//     args: "rx_pcap=in.pcap"   # vdev arguments (device args after the name), optional
//     eal: [--in-memory, -l, "0-3"]   # EAL options (see below)
//     rx_queues: 1              # RSS spreads flows over them where the device offers RSS
//     tx_queues: 1
//     rx_desc: 1024             # descriptors per queue
//     tx_desc: 1024
//     mbufs: 16383              # mbuf pool of this port
//     mtu: 1500                 # default: keep the device's
//     promiscuous: true         # default true (devices that cannot are left as they are)
//
// EAL is initialised once per process, by the first dpdk port built, from its `eal:` list
// (default: --in-memory); later ports may repeat the same list or leave it out, any other list
// is an error (rte_eal_init cannot run twice). rte_eal_init pins the calling thread to one
// core; the caller's affinity is restored right after, so threads started later (workers,
// I/O threads) are not all pinned to that core.
//
// rx_burst polls the rx queues in turn and copies frames into the batch; tx() copies into an
// mbuf and queues it, sent with rte_eth_tx_burst every 32 frames and at tx_burst_end(). Frames
// the device does not take within a second are freed and reported at close (lost_after_post).
// zero_copy(): mbuf hand-over ("dpdk-mbuf") on queue 0, for `forward:` between dpdk ports, per
// frame or as whole mbuf bursts (zc_handle_bursts). io_thread_begin() registers the calling
// thread with EAL (rte_thread_register) so its mbuf alloc/free use a per-lcore mempool cache.
#pragma once

#include <memory>
#include <string>

#include "core/config_node.h"
#include "io/port.h"

namespace gpunfv {

// Builds a dpdk port; throws ConfigError (bad keys, EAL or device errors, or a build without
// DPDK).
std::unique_ptr<Port> make_dpdk_port(const ConfigNode& node, uint16_t id);

}  // namespace gpunfv
