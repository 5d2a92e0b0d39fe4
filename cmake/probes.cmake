# Probes (bench/probes): small programs that time or sample one mechanism alone, to explain
# what a benchmark shows. dma_probe: the copy-engine operations the NIC emulator's steps are
# made of. gpunfv_pc_sampler: a preloadable sampling profiler for hosts without perf
# (bench/probes/pc_sampler.c; bench/probes/pc_report.py reads what it wrote).
if(GPUNFV_HAVE_CUDA)
  add_executable(dma_probe ${CMAKE_CURRENT_SOURCE_DIR}/bench/probes/dma_probe.cu)
  target_link_libraries(dma_probe PRIVATE gpunfv_lib CUDA::cudart)
endif()
add_library(gpunfv_pc_sampler MODULE ${CMAKE_CURRENT_SOURCE_DIR}/bench/probes/pc_sampler.c)
target_compile_options(gpunfv_pc_sampler PRIVATE -Wall -Wextra)
target_link_libraries(gpunfv_pc_sampler PRIVATE pthread ${CMAKE_DL_LIBS})
