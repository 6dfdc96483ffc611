# SPDX-License-Identifier: MIT
# For the checks run as CMake scripts (cmake -DFILE=x.json -P check.cmake):
# reads FILE into `doc` (failing when it was not written) and defines
# json_get(var key...), which reads one value and fails the check, naming
# the key, when it is missing. Shared by the lab's and wcet's JSON checks.
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} was not written")
endif()
file(READ "${FILE}" doc)
macro(json_get var)
  string(JSON ${var} ERROR_VARIABLE err GET "${doc}" ${ARGN})
  if(err)
    message(FATAL_ERROR "${FILE}: ${ARGN}: ${err}")
  endif()
endmacro()
