# Version and revision are stamped into the binary (`fabricwatch version`, fabricwatch_build_info).
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE FW_GIT_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT FW_GIT_REVISION)
  set(FW_GIT_REVISION "unknown")
endif()
set(FW_BUILD_FLAGS "${CMAKE_BUILD_TYPE}")
if(FW_SANITIZE)
  string(APPEND FW_BUILD_FLAGS " sanitize=${FW_SANITIZE}")
endif()
string(APPEND FW_BUILD_FLAGS " ${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION}")
