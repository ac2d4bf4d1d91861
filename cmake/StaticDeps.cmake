# Small dependencies linked from their static archives (Debian ships them in the -dev packages).
# Every shared library costs a one-shot command (`fabricwatch check` in a Slurm prolog) its
# open, mappings and relocations at start, and costs the daemon the resident pages of its code
# and its relocated data (a library's pages count in RSS in full even where another process maps
# the same file). From an archive only the objects fabricwatch uses are linked in, next to its
# own code. yaml-cpp, re2, zlib and libxcrypt come from archives; toml++ is compiled into the one
# file that reads TOML (its header-only mode); prometheus-cpp is used for its headers only
# (cmake/Dependencies.cmake).
#
# The fabricwatch executable also links libstdc++ and libgcc statically (-static-libstdc++
# -static-libgcc): with no C++ shared library left in its link nothing needs the shared
# libstdc++, which cost the daemon 1.7 MiB resident and every start ~2,000 of its ~6,200 symbol
# lookups; the parts of it linked in cost 0.9 MiB. The dlopen()ed libraries are C (libibverbs,
# libfabric) but for libnccl in the NCCL probe's child, which loads the shared libstdc++ for
# itself: the executable exports none of its own copy's symbols, so the two do not mix.
# libcrypto/libssl stay shared, so a distribution's OpenSSL security update applies without a
# rebuild, but are not linked either: they are dlopen()ed when TLS, basic auth or the peer mesh
# first needs them (core/openssl.h). libibverbs stays shared (its providers are shared objects).
#
# Sanitizer builds link the archives the same way (the suite checks the image's runtime packages
# against the binary's `ldd`, in the ASan build too; the archives are not instrumented, as the
# shared libraries were not), but keep libstdc++ and libgcc shared: ASan and TSan interpose on
# what the shared libstdc++ exports (operator new/delete, __cxa_throw, __cxa_guard_*), which a
# copy linked into the binary would bypass.
option(FW_STATIC_DEPS "Link yaml-cpp, re2, zlib, libxcrypt (and, outside sanitizer builds, libstdc++ and libgcc) statically; toml++ header-only" ON)

# What the fabricwatch executable links with (exporter/CMakeLists.txt); the test binaries keep
# the shared runtime.
add_library(fw_runtime_link INTERFACE)
if(FW_STATIC_DEPS AND NOT FW_SANITIZE)
  target_link_options(fw_runtime_link INTERFACE -static-libstdc++ -static-libgcc)
endif()

if(FW_STATIC_DEPS)
  # fw_static_archive(VAR NAME): the full path of libNAME.a, or a configure error.
  function(fw_static_archive var name)
    find_library(${var} NAMES lib${name}.a NO_CACHE)
    if(NOT ${var})
      message(FATAL_ERROR "lib${name}.a not found: install its -dev package or set -DFW_STATIC_DEPS=OFF")
    endif()
    set(${var} ${${var}} PARENT_SCOPE)
  endfunction()

  fw_static_archive(FW_YAML_CPP_A yaml-cpp)
  get_target_property(configs yaml-cpp IMPORTED_CONFIGURATIONS)
  set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${FW_YAML_CPP_A})
  foreach(c ${configs})
    set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION_${c} ${FW_YAML_CPP_A})
  endforeach()

  fw_static_archive(FW_RE2_A re2)
  set_target_properties(PkgConfig::RE2 PROPERTIES INTERFACE_LINK_LIBRARIES "${FW_RE2_A};Threads::Threads")

  fw_static_archive(FW_CRYPT_A crypt)
  set_target_properties(PkgConfig::LIBXCRYPT PROPERTIES INTERFACE_LINK_LIBRARIES ${FW_CRYPT_A})

  fw_static_archive(FW_Z_A z)
  set_target_properties(ZLIB::ZLIB PROPERTIES IMPORTED_LOCATION ${FW_Z_A})
  get_target_property(configs ZLIB::ZLIB IMPORTED_CONFIGURATIONS)
  if(configs)
    foreach(c ${configs})
      set_target_properties(ZLIB::ZLIB PROPERTIES IMPORTED_LOCATION_${c} ${FW_Z_A})
    endforeach()
  endif()

  # toml++ without its shared library: the implementation compiles into config/loader.cc.
  add_library(fw_tomlplusplus INTERFACE)
  target_compile_definitions(fw_tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
  target_compile_features(fw_tomlplusplus INTERFACE cxx_std_17)
else()
  add_library(fw_tomlplusplus INTERFACE)
  target_link_libraries(fw_tomlplusplus INTERFACE tomlplusplus::tomlplusplus)
endif()
