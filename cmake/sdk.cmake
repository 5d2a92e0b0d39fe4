# The SDK for NF plugins: `cmake --install` puts gpunfv's headers under include/gpunfv and a CMake
# package under lib/cmake/gpunfv, so that an NF built outside the tree finds them with
# find_package(gpunfv) and builds with gpunfv_add_nf_plugin (docs/writing-an-nf.md). The
# installed gpunfv finds its CUDA runtime, which plugins share, through its RPATH.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(DIRECTORY src/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpunfv
        FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
set(GPUNFV_SDK_UNCHECKED 0)
if(GPUNFV_UNCHECKED)
  set(GPUNFV_SDK_UNCHECKED 1)
endif()
configure_file(cmake/sdk/gpunfvConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/sdk/gpunfvConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sdk/gpunfvConfigVersion.cmake
                                 COMPATIBILITY ExactVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sdk/gpunfvConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/sdk/gpunfvConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpunfv)
set_target_properties(gpunfv PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
