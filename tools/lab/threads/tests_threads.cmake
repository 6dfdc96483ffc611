# SPDX-License-Identifier: MIT
# `rtmem bench threads`: its ctest entries (included by tools/lab/CMakeLists.txt),
# and, run as a script (cmake -DFILE=x.json -P tests_threads.cmake), the check
# of the JSON a --quick run wrote.

if(CMAKE_SCRIPT_MODE_FILE)
  # The JSON parses, names the command, carries machine, rt_setup and the
  # five verdicts, and what it measured is there: a run that measured
  # nothing cannot pass. With -DMT=<name>: that mt heap's row is there, of
  # kind mt, ok (every run clean: its heap check and leak check held at the
  # end), every thread attached, and the mt targets have their lines at 2
  # threads.
  include(${CMAKE_CURRENT_LIST_DIR}/../../../cmake/json_read.cmake)
  json_get(tool tool)
  json_get(command command)
  json_get(version schema_version)
  json_get(cpu machine cpu)
  json_get(rt rt_setup)
  if(NOT tool STREQUAL "rtmem" OR NOT command STREQUAL "bench threads" OR NOT version EQUAL 1)
    message(FATAL_ERROR "${FILE}: tool '${tool}', command '${command}', schema ${version}")
  endif()
  string(JSON nverdicts LENGTH "${doc}" verdicts)
  string(JSON nalloc LENGTH "${doc}" allocators)
  if(NOT nverdicts EQUAL 5 OR nalloc LESS 1)
    message(FATAL_ERROR "${FILE}: ${nverdicts} verdicts, ${nalloc} allocators")
  endif()
  # Every row that says "ok" measured every cell cleanly, and one row at
  # least did (under a sanitizer build only the locked heaps can: the
  # sanitizer owns malloc, so the glibc row is "invalid" there).
  set(ok_rows 0)
  math(EXPR last "${nalloc} - 1")
  foreach(i RANGE ${last})
    json_get(name allocators ${i} name)
    json_get(status allocators ${i} status)
    if(NOT status STREQUAL "ok")
      continue()
    endif()
    math(EXPR ok_rows "${ok_rows} + 1")
    foreach(bench seed002 pc)
      string(JSON ncells LENGTH "${doc}" allocators ${i} ${bench})
      math(EXPR lastcell "${ncells} - 1")
      foreach(c RANGE ${lastcell})
        json_get(clean allocators ${i} ${bench} ${c} clean_runs)
        json_get(median allocators ${i} ${bench} ${c} wall_ms median)
        if(clean LESS 1 OR NOT median GREATER 0)
          message(FATAL_ERROR "${FILE}: ${name} ${bench} cell ${c}: ${clean} clean runs, "
                              "median wall ${median} ms")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(ok_rows EQUAL 0)
    message(FATAL_ERROR "${FILE}: no allocator measured cleanly")
  endif()
  if(DEFINED MT)
    set(found 0)
    foreach(i RANGE ${last})
      json_get(name allocators ${i} name)
      if(NOT name STREQUAL MT)
        continue()
      endif()
      set(found 1)
      json_get(kind allocators ${i} kind)
      json_get(status allocators ${i} status)
      if(NOT kind STREQUAL "mt" OR NOT status STREQUAL "ok")
        message(FATAL_ERROR "${FILE}: ${MT}: kind '${kind}', status '${status}'")
      endif()
      foreach(bench seed002 pc)
        string(JSON nruns LENGTH "${doc}" allocators ${i} ${bench} 0 runs)
        math(EXPR lastrun "${nruns} - 1")
        foreach(r RANGE ${lastrun})
          string(JSON un ERROR_VARIABLE absent GET "${doc}" allocators ${i} ${bench} 0 runs ${r}
                 unattached_threads)
          if(NOT absent)
            message(FATAL_ERROR "${FILE}: ${MT} ${bench}: ${un} threads not attached")
          endif()
        endforeach()
      endforeach()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "${FILE}: no row ${MT}")
    endif()
    foreach(v 3 4)
      json_get(key verdicts ${v} target)
      string(JSON nlines LENGTH "${doc}" verdicts ${v} lines)
      if(NOT key MATCHES "^mt_vs_" OR NOT nlines EQUAL 2)
        message(FATAL_ERROR "${FILE}: verdict ${v} '${key}' with ${nlines} lines (want 2)")
      endif()
    endforeach()
  endif()
  message(STATUS "${FILE}: ${nalloc} allocators (${ok_rows} ok), ${nverdicts} verdicts")
  return()
endif()

# The quick profile runs to the end, exits 0 and writes its JSON; a second
# test (this file in script mode, above) checks the file the first wrote.
set(threads_json ${CMAKE_CURRENT_BINARY_DIR}/threads-quick.json)
lab_expect(threads.quick 0 bench threads --quick --json ${threads_json})
# A fixture: when the run fails, the check is not run against a stale file.
set_tests_properties(lab.threads.quick PROPERTIES TIMEOUT 300 FIXTURES_SETUP threads_json)
add_test(NAME lab.threads.quick.json
         COMMAND ${CMAKE_COMMAND} -DFILE=${threads_json}
                 -P ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(lab.threads.quick.json PROPERTIES FIXTURES_REQUIRED threads_json)

# The mt heap beside the same algorithm behind a lock: a short run whose
# JSON must hold a clean mt:tlsf row and the mt targets' lines.
set(threads_mt_json ${CMAKE_CURRENT_BINARY_DIR}/threads-mt.json)
lab_expect(threads.mt 0 bench threads --allocators mt:tlsf,locked:tlsf --threads 1,2
           --ntimes 2000 --rounds 2 --pc-blocks 5000 --runs 1 --json ${threads_mt_json})
set_tests_properties(lab.threads.mt PROPERTIES TIMEOUT 300 FIXTURES_SETUP threads_mt_json)
add_test(NAME lab.threads.mt.json
         COMMAND ${CMAKE_COMMAND} -DFILE=${threads_mt_json} -DMT=mt:tlsf
                 -P ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(lab.threads.mt.json PROPERTIES FIXTURES_REQUIRED threads_mt_json)

lab_expect(help.threads 0 bench threads --help)

# Misuse: exit 2 with the usage on stderr.
lab_expect(threads.misuse.unknown-allocator 2 bench threads --allocators glibc,nosuchmalloc)
lab_expect(threads.misuse.unknown-locked-heap 2 bench threads --allocators locked:nosuchheap)
lab_expect(threads.misuse.mt-pool 2 bench threads --allocators mt:pool)
lab_expect(threads.misuse.mt-unknown 2 bench threads --allocators mt:nosuch)
lab_expect(threads.misuse.empty-allocator 2 bench threads --allocators glibc,,mimalloc)
lab_expect(threads.misuse.threads-zero 2 bench threads --threads 0)
lab_expect(threads.misuse.threads-empty-element 2 bench threads --threads 1,,2)
lab_expect(threads.misuse.threads-trailing-comma 2 bench threads --threads 1,2,)
lab_expect(threads.misuse.threads-duplicate 2 bench threads --threads 2,2)
lab_expect(threads.misuse.threads-too-many 2 bench threads --threads 65)
lab_expect(threads.misuse.ntimes-zero 2 bench threads --ntimes 0)
lab_expect(threads.misuse.rounds-zero 2 bench threads --rounds 0)
lab_expect(threads.misuse.runs-zero 2 bench threads --runs 0)
lab_expect(threads.misuse.negative 2 bench threads --ntimes -5)
lab_expect(threads.misuse.unknown-bench 2 bench threads --bench seed002,nosuch)
lab_expect(threads.misuse.unknown-option 2 bench threads --bogus)

# Unit test of the pure pieces: list parsers, the pool benchmark's sizes, the result
# line, ratios and summaries.
lab_unit(threads.unit lab_threads_unit threads/tests/threads_unit.c threads/threads_parse.c
         common/result_line.c common/summary.c LIBS m)
