# Every dependency is a Debian package (scripts/dev installs them). NCCL and CUDA are never
# linked: the NCCL probe (probes/nccl) dlopen()s them in its child process at run time, so a
# node without them builds and runs everything else.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)   # core: metric families and the text serializer
find_package(yaml-cpp REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(ZLIB REQUIRED)                    # gzip for /metrics (exporter/gzip.h)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# libxcrypt's crypt_rn() verifies the bcrypt hashes of --web.config.file's basic_auth_users.
pkg_check_modules(LIBXCRYPT REQUIRED IMPORTED_TARGET libxcrypt)
if(FW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(FW_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
