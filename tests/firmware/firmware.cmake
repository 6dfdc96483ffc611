# SPDX-License-Identifier: MIT
# The firmware runs as ctest tests (label "firmware"): one per emulated
# board, each scripts/test-firmware.sh for that board, skipped (exit 77)
# when the Arm compiler, picolibc or qemu-system-arm is missing. A board
# takes one to three minutes of emulation, so they are registered only when
# asked for: cmake -DRTMEM_FIRMWARE_TESTS=ON, then ctest -L firmware. CI
# runs the same script as a stage of its own (.ci/run).
if(RTMEM_FIRMWARE_TESTS)
  set(rtmem_firmware_tests "")
  foreach(board an385 an386 an505 microbit)
    add_test(NAME firmware_${board}
             COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-firmware.sh
                     -o ${CMAKE_CURRENT_BINARY_DIR}/firmware -j 1 ${board})
    set_tests_properties(firmware_${board} PROPERTIES LABELS firmware SKIP_RETURN_CODE 77)
    list(APPEND rtmem_firmware_tests firmware_${board})
  endforeach()
  # After tests/CMakeLists.txt gives every test its budget: a board's
  # emulation needs more on a loaded machine. (EVAL: the names are
  # expanded now, not when the deferred call runs.)
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
    string(JOIN " " rtmem_firmware_names ${rtmem_firmware_tests})
    cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${CMAKE_CURRENT_SOURCE_DIR}]] CALL set_tests_properties ${rtmem_firmware_names} PROPERTIES TIMEOUT 1200)")
  endif()
endif()

# The flash budget (scripts/flash-size.sh --budget): the text TLSF and
# half-fit add to a -nostdlib Cortex-M4 image (typed API, -Os); fails when
# a heap grows past its budget. Seconds; skipped without arm-none-eabi-gcc.
add_test(NAME flash_budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/flash-size.sh --budget tlsf tlsf-nogrow halffit)
set_tests_properties(flash_budget PROPERTIES LABELS firmware SKIP_RETURN_CODE 77)
