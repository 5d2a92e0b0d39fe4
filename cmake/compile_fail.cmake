# Sources that must not compile (tests/compile_fail/): an NF whose view or kernel could reach
# memory that is not its own is refused at compile time (core/iso_view.h, nf/nf_kernel.h).
# Each is compiled by the build's C++ compiler, CPU backend, and passes only when the isoPointer
# check is what refuses it; the control files beside them must compile.
if(GPUNFV_TESTS)
  set(compile_fail_flags -std=c++20 -fsyntax-only -I${CMAKE_CURRENT_SOURCE_DIR}/src
      -DGPUNFV_HAVE_CUDA=0)
  # A test compiling tests/compile_fail/FILE.cpp; with REFUSAL, it passes only when the
  # compiler's output holds it.
  function(gpunfv_compile_test name file)
    add_test(NAME ${name}
             COMMAND ${CMAKE_CXX_COMPILER} ${compile_fail_flags}
                     ${CMAKE_CURRENT_SOURCE_DIR}/tests/compile_fail/${file}.cpp)
    if(ARGN)
      set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${ARGN}")
    endif()
  endfunction()
  foreach(name raw_pointer_view batch_view_view)
    gpunfv_compile_test(compile_fail_${name} ${name} "isoPointer: an NF's view holds only")
  endforeach()
  foreach(name raw_pointer_kernel batch_view_kernel)
    gpunfv_compile_test(compile_fail_${name} ${name} "isoPointer: an NF kernel takes only")
  endforeach()
  foreach(name table_ref_view nf_packets_kernel)
    gpunfv_compile_test(compile_fail_control_${name} ${name})
  endforeach()
endif()
