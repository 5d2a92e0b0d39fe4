# Live ports: the DPDK ethdev port and the AF_XDP port, each built into gpunfv_lib
# when its libraries are found (their sources compile to a "not in this build" error otherwise).
#
# DPDK is linked statically, like the peers: a packaged gpunfv binary
# (scripts/package-for-gpu-host.sh) then runs on a host without DPDK installed. Drivers register themselves from constructors, so their archives are
# linked whole; only the virtual devices (net_ring, net_pcap, net_af_packet, net_memif) and the
# common Intel NIC drivers are included, not every PMD Debian ships.
option(GPUNFV_DPDK_PORT "Build the dpdk port type when libdpdk is found" ON)
option(GPUNFV_AFXDP_PORT "Build the afxdp port type when libxdp and libbpf are found" ON)

set(GPUNFV_HAVE_DPDK_PORT 0)
if(GPUNFV_DPDK_PORT AND DPDK_FOUND)
  set(drivers rte_net_ring rte_net_pcap rte_net_af_packet rte_net_memif rte_net_ixgbe
      rte_net_i40e rte_net_ice rte_net_e1000 rte_bus_vdev rte_bus_pci rte_mempool_ring)
  set(libs rte_common_iavf rte_ethdev rte_net rte_meter rte_hash rte_security rte_cryptodev rte_mbuf
      rte_mempool rte_rcu rte_ring rte_pci rte_eal rte_telemetry rte_kvargs)
  set(link "")
  set(ok 1)
  foreach(lib ${drivers} ${libs})
    find_library(archive NAMES lib${lib}.a HINTS ${DPDK_LIBRARY_DIRS} NO_CACHE)
    if(NOT archive)
      message(STATUS "gpunfv: lib${lib}.a not found, no dpdk port")
      set(ok 0)
      break()
    endif()
    if(lib IN_LIST drivers)
      list(APPEND link "$<LINK_LIBRARY:WHOLE_ARCHIVE,${archive}>")
    else()
      list(APPEND link ${archive})
    endif()
    unset(archive)
  endforeach()
  if(ok)
    set(GPUNFV_HAVE_DPDK_PORT 1)
    # The dpdk port, the EAL start they share with a gpuring port's real NIC, and that NIC;
    # the handle-burst forward, which calls DPDK's inline burst functions between two dpdk ports;
    # forward_bench's bare testpmd-style loop, which does too.
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/io/dpdk_port.cpp
                                ${CMAKE_CURRENT_SOURCE_DIR}/src/io/forward/forward_bursts.cpp
                                ${CMAKE_CURRENT_SOURCE_DIR}/bench/forward_bench/bare_io_loop.cpp
                                ${CMAKE_CURRENT_SOURCE_DIR}/src/io/dpdk_eal.cpp
                                ${CMAKE_CURRENT_SOURCE_DIR}/src/io/gpuring/nic/dpdk_nic.cpp PROPERTIES
      INCLUDE_DIRECTORIES "${DPDK_INCLUDE_DIRS}"
      COMPILE_OPTIONS "${DPDK_CFLAGS_OTHER};-Wno-volatile;$<$<CXX_COMPILER_ID:GNU>:-mno-stv>")
    # -mno-stv: with DPDK's -march (SSE4.1 and up) GCC's scalar-to-vector pass turns the burst
    # loops' 32-bit min/add chains into pminud/paddd on SSE registers, spilled as 4-byte stores
    # and reloaded as 16-byte loads that cannot be store-forwarded: a stall every turn, half of
    # the zero-copy forward's samples (perf, 2-core EPYC: loop 50% beside net_ring's rx+tx 46%;
    # 28% beside 68% without it). GCC's flag only: Clang (the sanitizer build) has no such pass.
    target_link_libraries(gpunfv_lib PUBLIC ${link} numa bsd -lpcap Threads::Threads
                          ${CMAKE_DL_LIBS} m rt)
  endif()
endif()
target_compile_definitions(gpunfv_lib PUBLIC GPUNFV_HAVE_DPDK_PORT=${GPUNFV_HAVE_DPDK_PORT})

set(GPUNFV_HAVE_AFXDP_PORT 0)
if(GPUNFV_AFXDP_PORT)
  pkg_check_modules(LIBXDP IMPORTED_TARGET libxdp)
  pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
  if(LIBXDP_FOUND AND LIBBPF_FOUND)
    set(GPUNFV_HAVE_AFXDP_PORT 1)
    # Statically where the archives exist (Debian ships them), like DPDK: binaries packaged for a
    # host without libxdp/libbpf still start (afxdp ports then fail with the kernel's reason).
    find_library(GPUNFV_LIBXDP_A NAMES libxdp.a HINTS ${LIBXDP_LIBRARY_DIRS} NO_CACHE)
    find_library(GPUNFV_LIBBPF_A NAMES libbpf.a HINTS ${LIBBPF_LIBRARY_DIRS} NO_CACHE)
    find_library(GPUNFV_LIBELF_A NAMES libelf.a NO_CACHE)
    if(GPUNFV_LIBXDP_A AND GPUNFV_LIBBPF_A AND GPUNFV_LIBELF_A)
      target_include_directories(gpunfv_lib SYSTEM PUBLIC ${LIBXDP_INCLUDE_DIRS} ${LIBBPF_INCLUDE_DIRS})
      target_link_libraries(gpunfv_lib PUBLIC ${GPUNFV_LIBXDP_A} ${GPUNFV_LIBBPF_A}
                            ${GPUNFV_LIBELF_A} ZLIB::ZLIB)
    else()
      target_link_libraries(gpunfv_lib PUBLIC PkgConfig::LIBXDP PkgConfig::LIBBPF)
    endif()
  endif()
endif()
target_compile_definitions(gpunfv_lib PUBLIC GPUNFV_HAVE_AFXDP_PORT=${GPUNFV_HAVE_AFXDP_PORT})
message(STATUS "gpunfv: live ports: dpdk ${GPUNFV_HAVE_DPDK_PORT}, afxdp ${GPUNFV_HAVE_AFXDP_PORT}")
