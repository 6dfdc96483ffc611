# SPDX-License-Identifier: MIT
# Runs EXE with ARGS ("|"-separated) and fails unless it exits with exactly
# EXPECT and its stderr matches MATCH (a regular expression), so that a bad
# trace is refused with the right message and byte offset, not just with
# some status. A crash is reported as a text, never a number: it cannot pass.
# NOMATCH (optional): a regular expression stderr must not match (a line
# that would mislead after the right one).
# usage: cmake -DEXE=path -DARGS=a|b -DEXPECT=1 -DMATCH=regex [-DNOMATCH=regex]
#        -P trace_expect.cmake
string(REPLACE "|" ";" argv "${ARGS}")
execute_process(COMMAND ${EXE} ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${EXPECT}")
  message(FATAL_ERROR "${EXE} ${argv}: exit '${rc}', expected ${EXPECT}\n${out}\n${err}")
endif()
if(NOT err MATCHES "${MATCH}")
  message(FATAL_ERROR "${EXE} ${argv}: stderr does not match '${MATCH}':\n${err}")
endif()
if(DEFINED NOMATCH AND err MATCHES "${NOMATCH}")
  message(FATAL_ERROR "${EXE} ${argv}: stderr matches '${NOMATCH}', which it must not:\n${err}")
endif()
message(STATUS "${argv}: exit ${rc}, stderr: ${err}")
