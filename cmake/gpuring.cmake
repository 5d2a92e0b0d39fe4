# GPU ring port (src/io/gpuring): the persistent kernels read packet bytes and descriptors that
# the copy engine (or, with a real NIC, peer-to-peer DMA) wrote while they run. Such writes do
# not invalidate the SMs' L1 caches, so global loads of those kernels are cached in L2 only.
# The files are where the kernels are compiled: the batch loops in io, the ring pairs and the
# forwarding kernel with the chain layer's NF hooks, and the forwarding helpers for tests (the
# same kind of data: rx descriptors, frames they checksum). A file missing here is an error, not
# a kernel silently compiled with L1 caching.
if(GPUNFV_HAVE_CUDA)
  foreach(file src/io/gpuring/loops/gpu_ring_batch_kernels.cu src/chain/ring_nf_runners.cu
               src/io/gpuring/loops/gpu_forward_kernels.cu)
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${file})
      message(FATAL_ERROR "cmake/gpuring.cmake: ${file} does not exist (moved? update this list)")
    endif()
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/${file} PROPERTIES COMPILE_OPTIONS "-Xptxas=-dlcm=cg")
  endforeach()
endif()
