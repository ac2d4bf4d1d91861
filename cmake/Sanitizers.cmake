# Sanitizer builds as a CMake option (Falco's habit): CI runs the suite once more under
# ASan+UBSan; TSan covers the snapshot publication and the scheduler.
#
# They build at -O1 (the level the sanitizers' documentation recommends: readable reports,
# tolerable speed) with line tables only (-g1: reports keep file:line); the options come after
# the build type's, so they win. With the -g1 default below, a cold CI run (.ci/run, no ccache,
# 2 cores) went from 24m50s to 15m06s.
if(FW_SANITIZE)
  add_compile_options(-O1 -g1)
endif()
if(FW_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
elseif(FW_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT FW_SANITIZE STREQUAL "")
  message(FATAL_ERROR "FW_SANITIZE must be '', 'address' or 'thread', not '${FW_SANITIZE}'")
endif()
