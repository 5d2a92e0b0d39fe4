# Fuzz targets (fuzz/fuzz_*.cpp), each one LLVMFuzzerTestOneInput over gpunfv_lib.
#   GPUNFV_FUZZ=ON (clang): libFuzzer executables build-fuzz/fuzz/NAME (`make fuzz` runs them).
#   otherwise (any compiler): NAME_replay, the same code with fuzz/replay_main.cpp, which feeds
#   it every file of fuzz/corpus/NAME/; ctest runs each as fuzz_replay_NAME, so `make test`
#   replays the corpora (and any crash file added to them as a regression).
file(GLOB GPUNFV_FUZZ_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.cpp)
set(GPUNFV_FUZZ_NAMES "")
foreach(src ${GPUNFV_FUZZ_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  list(APPEND GPUNFV_FUZZ_NAMES ${name})
  if(GPUNFV_FUZZ)
    set(target ${name})
    add_executable(${target} ${src})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  elseif(GPUNFV_TESTS)
    set(target ${name}_replay)
    add_executable(${target} ${src} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay_main.cpp)
    add_test(NAME fuzz_replay_${name} COMMAND ${target}
             ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  else()
    continue()
  endif()
  # whole archive: NFs register themselves from object files nothing else references
  target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,gpunfv_lib>")
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  if(name STREQUAL "fuzz_control")  # the control commands are the CLI's, not gpunfv_lib's
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/cli/control_commands.cpp)
  endif()
endforeach()
if(GPUNFV_FUZZ)
  add_custom_target(fuzz_targets DEPENDS ${GPUNFV_FUZZ_NAMES})
endif()
