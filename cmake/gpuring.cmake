# GPU ring port (src/io/gpuring): the persistent kernels read packet bytes and descriptors that
# the copy engine (or, with a real NIC, peer-to-peer DMA) wrote while they run. Such writes do
# not invalidate the SMs' L1 caches, so global loads of those kernels are cached in L2 only.
if(GPUNFV_HAVE_CUDA)
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/io/gpuring/gpu_ring_kernels.cu
                              PROPERTIES COMPILE_OPTIONS "-Xptxas=-dlcm=cg")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/io/gpuring/gpu_ring_batch_kernels.cu
                              PROPERTIES COMPILE_OPTIONS "-Xptxas=-dlcm=cg")
  # The forwarding kernel polls the same kind of data (rx descriptors, frames it checksums).
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/src/io/gpuring/gpu_forward_kernels.cu
                              PROPERTIES COMPILE_OPTIONS "-Xptxas=-dlcm=cg")
endif()
