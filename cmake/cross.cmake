# SPDX-License-Identifier: MIT
# Running target programs from scripts in cross builds (scripts/test-cross.sh,
# cmake/toolchains/). ctest prefixes CMAKE_CROSSCOMPILING_EMULATOR (qemu-user)
# only to a test whose COMMAND is an executable target; a test that runs a
# target program from a script (cmake -P, sh) would exec a foreign binary,
# which needs binfmt_misc, absent in many containers and CI runners.
#
#   rtmem_runnable(<var> <target>)
#
# sets <var> to a path that runs <target> on this machine: its file itself
# in a native build, or a generated shell wrapper,
# <build>/emulated/<target>, that execs the emulator on it in a cross build.
# A script test passes ${<var>} where it would pass $<TARGET_FILE:<target>>.
function(rtmem_runnable var target)
  if(NOT CMAKE_CROSSCOMPILING OR NOT CMAKE_CROSSCOMPILING_EMULATOR)
    set(${var} $<TARGET_FILE:${target}> PARENT_SCOPE)
    return()
  endif()
  set(wrapper ${PROJECT_BINARY_DIR}/emulated/${target})
  # One wrapper per target, however many callers ask for it.
  get_property(done GLOBAL PROPERTY rtmem_runnable_${target})
  if(NOT done)
    set_property(GLOBAL PROPERTY rtmem_runnable_${target} TRUE)
    set(words "")
    foreach(word IN LISTS CMAKE_CROSSCOMPILING_EMULATOR)
      string(APPEND words "'${word}' ")
    endforeach()
    file(GENERATE OUTPUT ${wrapper}
         CONTENT "#!/bin/sh\n# ${target} under ${CMAKE_CROSSCOMPILING_EMULATOR} (cmake/cross.cmake)\nexec ${words}'$<TARGET_FILE:${target}>' \"$@\"\n"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                          WORLD_READ WORLD_EXECUTE)
  endif()
  set(${var} ${wrapper} PARENT_SCOPE)
endfunction()

# file(GENERATE ... FILE_PERMISSIONS) needs CMake 3.20; native builds keep
# the project's minimum.
if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR AND CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "rtmem: cross builds with an emulator need CMake 3.20 or later")
endif()
