# Every dependency is a Debian package (scripts/dev installs them). NCCL and CUDA are never
# linked: the NCCL probe (probes/kinds/nccl) dlopen()s them in its child process at run time, so a
# node without them builds and runs everything else.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(ZLIB REQUIRED)                    # gzip for /metrics (exporter/gzip.h)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# libxcrypt's crypt_rn() verifies the bcrypt hashes of --web.config.file's basic_auth_users.
pkg_check_modules(LIBXCRYPT REQUIRED IMPORTED_TARGET libxcrypt)
# prometheus-cpp (prometheus-cpp-dev) for its data model only: prometheus::MetricFamily and
# ClientMetric, plain structs in its headers. None of its libraries is linked: the text format
# is core/text_format.h and the self metrics exporter/self_metrics.h, so that no C++ shared
# library keeps libstdc++ shared (cmake/StaticDeps.cmake).
find_path(FW_PROMETHEUS_CPP_INCLUDE_DIR prometheus/metric_family.h)
if(NOT FW_PROMETHEUS_CPP_INCLUDE_DIR)
  message(FATAL_ERROR "prometheus/metric_family.h not found: install prometheus-cpp-dev")
endif()
add_library(fw_prometheus_headers INTERFACE)
target_include_directories(fw_prometheus_headers SYSTEM INTERFACE ${FW_PROMETHEUS_CPP_INCLUDE_DIR})
if(FW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(FW_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
