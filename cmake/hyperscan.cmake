# Hyperscan (optional): the independent peer of the NIDS's Aho-Corasick DFA (bench/peers/
# hyperscan_peer.*, and hyperscan_rules_peer.*: Suricata's way of using it). Linked only by gpunfv_tests (the agreement test), nf_bench and the NIDS
# benchmark if one exists; gpunfv_lib and the gpunfv binary stay free of it.
option(GPUNFV_HYPERSCAN "Build the Hyperscan peer when libhs is found" ON)
set(GPUNFV_HAVE_HYPERSCAN 0)
if(GPUNFV_HYPERSCAN)
  pkg_check_modules(HS IMPORTED_TARGET libhs)
endif()
if(HS_FOUND)
  set(GPUNFV_HAVE_HYPERSCAN 1)
  add_library(gpunfv_hyperscan_peer STATIC ${CMAKE_CURRENT_SOURCE_DIR}/bench/peers/hyperscan_peer.cpp
              ${CMAKE_CURRENT_SOURCE_DIR}/bench/peers/hyperscan_rules_peer.cpp)
  target_include_directories(gpunfv_hyperscan_peer PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/bench)
  target_compile_definitions(gpunfv_hyperscan_peer PUBLIC GPUNFV_HAVE_HYPERSCAN=1)
  target_link_libraries(gpunfv_hyperscan_peer PUBLIC gpunfv_lib PRIVATE PkgConfig::HS)
  foreach(target gpunfv_tests nids_bench nf_bench)
    if(TARGET ${target})
      target_link_libraries(${target} PRIVATE gpunfv_hyperscan_peer)
    endif()
  endforeach()
endif()
message(STATUS "gpunfv: Hyperscan peer ${GPUNFV_HAVE_HYPERSCAN} ${HS_VERSION}")
