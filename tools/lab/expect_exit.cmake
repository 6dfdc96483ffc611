# SPDX-License-Identifier: MIT
# Runs EXE with ARGS ("|"-separated) and fails unless it exits with exactly
# EXPECT. Exit 2 (misuse) must print what was wrong, "rtmem <cmd>: ...", and
# end with the pointer "Try 'rtmem <cmd> --help'." on stderr, without the
# whole usage (opts_usage_error); MESSAGE, when given, is a regular
# expression the message must match (the option it names, say). --help is
# exit 0, the usage on stdout and nothing on stderr. execute_process reports
# a death by signal as a text such as "Segmentation fault", never as a
# number, so a crash cannot match.
# usage: cmake -DEXE=path -DARGS=a|b -DEXPECT=2 [-DMESSAGE=regex] -P expect_exit.cmake
if(ARGS)
  string(REPLACE "|" ";" argv "${ARGS}")
else()
  set(argv "")
endif()
list(FILTER argv EXCLUDE REGEX "^$")
execute_process(COMMAND ${EXE} ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
# Smoke runs print a report worth seeing in ctest's log.
if("${EXPECT}" STREQUAL "0")
  message("${out}")
endif()
if(NOT "${rc}" STREQUAL "${EXPECT}")
  message(FATAL_ERROR "rtmem ${argv}: exit '${rc}', expected ${EXPECT}\n${out}\n${err}")
endif()
if("${EXPECT}" STREQUAL "2")
  if(NOT err MATCHES "^rtmem[^\n]*: [^\n]+\n(.*\n)?Try 'rtmem[a-z ]* --help'[.]\n$")
    message(FATAL_ERROR "rtmem ${argv}: exit 2 without a message and the line "
                        "\"Try 'rtmem <cmd> --help'.\" at the end of stderr\n${err}")
  endif()
  if(err MATCHES "usage:")
    message(FATAL_ERROR "rtmem ${argv}: exit 2 printed the whole usage\n${err}")
  endif()
endif()
if(DEFINED MESSAGE AND NOT err MATCHES "${MESSAGE}")
  message(FATAL_ERROR "rtmem ${argv}: stderr does not match '${MESSAGE}'\n${err}")
endif()
# --help is the usage on stdout and nothing on stderr (opts_parse_or_exit).
list(FIND argv "--help" help_at)
if("${EXPECT}" STREQUAL "0" AND help_at GREATER -1
   AND (NOT out MATCHES "usage:" OR NOT err STREQUAL ""))
  message(FATAL_ERROR "rtmem ${argv}: --help without the usage on stdout, or with stderr\n${err}")
endif()
message(STATUS "rtmem ${argv}: exit ${rc} as expected")
