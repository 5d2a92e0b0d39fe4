# Sources that must not compile (tests/compile_fail/): an NF whose view could reach memory that
# is not its own is refused at compile time (core/iso_view.h). Each is compiled by the build's
# C++ compiler, CPU backend, and passes only when the isoPointer check is what refuses it; the
# control file beside them must compile.
if(GPUNFV_TESTS)
  set(compile_fail_flags -std=c++20 -fsyntax-only -I${CMAKE_CURRENT_SOURCE_DIR}/src
      -DGPUNFV_HAVE_CUDA=0)
  foreach(name raw_pointer_view batch_view_view)
    add_test(NAME compile_fail_${name}
             COMMAND ${CMAKE_CXX_COMPILER} ${compile_fail_flags}
                     ${CMAKE_CURRENT_SOURCE_DIR}/tests/compile_fail/${name}.cpp)
    set_tests_properties(compile_fail_${name} PROPERTIES
                         PASS_REGULAR_EXPRESSION "isoPointer: an NF's view holds only")
  endforeach()
  add_test(NAME compile_fail_control
           COMMAND ${CMAKE_CXX_COMPILER} ${compile_fail_flags}
                   ${CMAKE_CURRENT_SOURCE_DIR}/tests/compile_fail/table_ref_view.cpp)
endif()
