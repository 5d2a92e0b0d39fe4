# Probes (bench/probes): small CUDA programs that time one mechanism alone, to explain what a
# benchmark shows. dma_probe: the copy-engine operations the NIC emulator's steps are made of.
if(GPUNFV_HAVE_CUDA)
  add_executable(dma_probe ${CMAKE_CURRENT_SOURCE_DIR}/bench/probes/dma_probe.cu)
  target_link_libraries(dma_probe PRIVATE gpunfv_lib CUDA::cudart)
endif()
