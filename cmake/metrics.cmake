# The metrics endpoint (telemetry/metrics_server.cpp) serves HTTP with cpp-httplib
# (libcpp-httplib-dev, scripts/install-deps.sh).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
target_link_libraries(gpunfv_lib PRIVATE PkgConfig::HTTPLIB)
