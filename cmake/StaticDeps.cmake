# Small dependencies linked from their static archives (Debian ships them in the -dev packages).
# Every shared library costs a one-shot command (`fabricwatch check` in a Slurm prolog) its
# open, mappings and relocations at start, and costs the daemon the resident pages of its code
# and its relocated data (a library's pages count in RSS in full even where another process maps
# the same file). From an archive only the objects fabricwatch uses are linked in, next to its
# own code. yaml-cpp, re2, zlib and libxcrypt come from archives; toml++ is compiled into the one
# file that reads TOML (its header-only mode). libcrypto/libssl stay shared, so a distribution's
# OpenSSL security update applies without a rebuild, but are not linked either: they are
# dlopen()ed when TLS, basic auth or the peer mesh first needs them (core/openssl.h). libstdc++
# (prometheus-cpp's shared library needs it anyway) and libibverbs (its providers are loaded as
# shared objects) stay shared too.
# Sanitizer builds link the same way (the suite checks the image's runtime packages against
# the binary's `ldd`, in the ASan build too); the archives are not instrumented, as the shared
# libraries were not.
option(FW_STATIC_DEPS "Link yaml-cpp, re2, zlib and libxcrypt statically; toml++ header-only" ON)

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
