# Layering (scripts/check-layers.py): no source file includes a header of a layer above its own
# (core < gpu < nf < io < chain, sched < config < telemetry < cli; io includes no nf; chain and
# sched parse no configuration), and no file includes another component's internal/ headers.
# ctest runs it as `layers`, so `make test` fails on such an include.
if(GPUNFV_TESTS)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME layers COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check-layers.py
           ${CMAKE_CURRENT_SOURCE_DIR}/src)
endif()
