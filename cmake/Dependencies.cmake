# Every dependency is a Debian package (scripts/dev installs them). NCCL and CUDA are not among
# them and nothing links them: the facts find NCCL by its library's file name and read its
# settings from /etc/nccl.conf and each workload's environment, so any node builds and runs it.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)   # core: metric families and the text serializer
find_package(civetweb CONFIG REQUIRED)         # the HTTP server under prometheus-cpp's pull
find_package(yaml-cpp REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(OpenSSL REQUIRED)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
if(FW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(FW_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
