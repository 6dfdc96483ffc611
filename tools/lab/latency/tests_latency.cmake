# SPDX-License-Identifier: MIT
# tests_latency.cmake -- the tests of `rtmem latency` (docs/LATENCY.md).
#
# Included by tools/lab/CMakeLists.txt (lab_expect() is defined there). The
# same file is also the checker of the quick run's JSON when run as a script
# (cmake -DEXE=... -DOUT=... -P tests_latency.cmake): every test present in
# order, none failed, a skip always with its reason, and for each test that
# ran: 0 <= min <= avg <= max, min <= p50 <= p99 <= p99.9 <= max, samples
# taken, histogram counts (plus overflow) adding up to the samples. Script mode needs no
# python: CMake's string(JSON) reads the file.

if(CMAKE_SCRIPT_MODE_FILE)
  set(names bmCtxSemPend bmCtxSemUnpend bmCtxMsgQPend bmCtxMsgQUnpend bmCtxEventPend
            bmCtxEventUnpend bmCtxTaskSwitch CtxSmpAffinitySemUnPend CtxSmpAffinityMsgQUnPend
            CtxSmpNoAffinitySemUnPend CtxSmpNoAffinityMsgQUnPend HeapLockHandover
            HeapPiSpinnerWait HeapNoPiSpinnerWait HeapContendedLocked HeapContendedMt)
  execute_process(COMMAND ${EXE} latency --quick --json ${OUT} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT "${rc}" STREQUAL "0")
    message(FATAL_ERROR "rtmem latency --quick: exit '${rc}'\n${out}\n${err}")
  endif()
  file(READ ${OUT} doc)
  set(problems "")
  macro(get var)
    string(JSON ${var} ERROR_VARIABLE jerr GET "${doc}" ${ARGN})
    if(jerr)
      string(APPEND problems "\n  missing ${ARGN}: ${jerr}")
      set(${var} "")
    endif()
  endmacro()
  macro(problem what)
    string(APPEND problems "\n  ${what}")
  endmacro()

  get(command command)
  if(NOT command STREQUAL "latency")
    problem("command is '${command}'")
  endif()
  get(setup rt_setup)
  if(setup STREQUAL "")
    problem("rt_setup is empty")
  endif()
  string(JSON ntests LENGTH "${doc}" tests)
  list(LENGTH names nwant)
  if(NOT ntests EQUAL nwant)
    problem("${ntests} tests, want ${nwant}")
  endif()
  string(JSON npub LENGTH "${doc}" published rows)
  if(NOT npub EQUAL 16)
    problem("${npub} published rows, want 16")
  endif()
  set(i 0)
  foreach(name ${names})
    get(got tests ${i} name)
    get(status tests ${i} status)
    get(why tests ${i} why)
    if(NOT got STREQUAL name)
      problem("test ${i} is '${got}', want ${name}")
    endif()
    if(status STREQUAL "skipped" AND why STREQUAL "")
      problem("${name} skipped without a reason")
    elseif(status STREQUAL "skipped")
      message(STATUS "${name}: skipped: ${why}")
    elseif(NOT status STREQUAL "ok")
      problem("${name}: status '${status}': ${why}")
    else()
      get(n tests ${i} samples)
      foreach(k avg min max p50 p99 p999)
        get(${k} tests ${i} summary_us ${k})
      endforeach()
      # Each pair must be in order: lower <= upper (nothing negative first).
      foreach(pair "0;min" "min;avg" "avg;max" "min;p50" "p50;p99" "p99;p999" "p999;max")
        list(GET pair 0 lo)
        list(GET pair 1 hi)
        if(lo STREQUAL "0")
          set(lov 0)
        else()
          set(lov ${${lo}})
        endif()
        if(${hi} LESS lov)
          problem("${name}: ${hi} ${${hi}} < ${lo} ${lov}")
        endif()
      endforeach()
      if(NOT n GREATER 0)
        problem("${name}: no samples")
      endif()
      string(JSON nb LENGTH "${doc}" tests ${i} histogram counts)
      get(total tests ${i} histogram overflow)
      if(nb GREATER 0)
        math(EXPR last "${nb} - 1")
        foreach(b RANGE ${last})
          get(c tests ${i} histogram counts ${b})
          math(EXPR total "${total} + ${c}")
        endforeach()
      endif()
      if(NOT total EQUAL n)
        problem("${name}: histogram holds ${total} of ${n} samples")
      endif()
      message(STATUS "${name}: avg ${avg} min ${min} max ${max} us")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  if(problems)
    message(FATAL_ERROR "rtmem latency --quick --json: ${problems}")
  endif()
  message(STATUS "rtmem latency --quick: ${ntests} tests present and sane")
  return()
endif()

# --- included by tools/lab/CMakeLists.txt ---------------------------------------

# Unit test: statistics on known samples, the T_sw formula on known inputs.
lab_unit(latency.stats test_latency_stats latency/tests/latency_stats_test.c
         latency/latency_stats.c common/summary.c LIBS m)

# The quick profile runs every test and its JSON is sane (script mode above).
add_test(NAME lab.latency.quick-json
         COMMAND ${CMAKE_COMMAND} -DEXE=${rtmem_lab_exe}
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/latency-quick.json
                 -P ${CMAKE_CURRENT_LIST_FILE})
lab_expect(latency.no-rt 0 latency --quick --no-rt)
lab_expect(latency.subset 0 latency --iterations 50 --tests bmCtxTaskSwitch,HeapLockHandover)
# A lost wakeup (the 3rd give dropped) fails the test within its timeout: exit 1, no hang.
lab_expect(latency.lost-wakeup 1 latency --iterations 10 --tests bmCtxSemUnpend
           --timeout-ms 100 --drop-give 3)
# --no-rt's report says what happened (tests/no_rt_says.sh).
add_test(NAME lab.latency.no-rt-says
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/latency/tests/no_rt_says.sh ${rtmem_lab_exe})
# The contended runs, locked and mt heaps: both run cleanly (each fails when
# its heap is not sound and empty at the end, an allocation was refused or a
# thread could not attach; the command's exit status is checked) and the
# report compares H's worst calls (tests/contended.sh).
add_test(NAME lab.latency.contended
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/latency/tests/contended.sh ${rtmem_lab_exe})
set_tests_properties(lab.latency.quick-json lab.latency.no-rt lab.latency.subset
                     lab.latency.lost-wakeup lab.latency.no-rt-says lab.latency.contended
                     PROPERTIES TIMEOUT 120)

lab_expect(help.latency 0 latency --help)
lab_expect(latency.misuse.unknown-option 2 latency --bogus)
lab_expect(latency.misuse.zero-iterations 2 latency --iterations 0)
lab_expect(latency.misuse.negative-iterations 2 latency --iterations -5)
lab_expect(latency.misuse.unknown-test 2 latency --tests bmCtxNoSuch)
lab_expect(latency.misuse.test-twice 2 latency --tests bmCtxSemPend,bmCtxSemPend)
lab_expect(latency.misuse.empty-tests 2 latency --tests ,)
lab_expect(latency.misuse.bad-cpu 2 latency --cpu 9999)
lab_expect(latency.misuse.zero-buckets 2 latency --buckets 0)
lab_expect(latency.misuse.unknown-algorithm 2 latency --algorithm nosuchheap)
lab_expect(latency.misuse.bad-clock 2 latency --clock sundial)
lab_expect(latency.misuse.flag-with-value 2 latency --quick=1)
lab_expect(latency.misuse.zero-spin 2 latency --spin-us 0)
lab_expect(latency.misuse.short-timeout 2 latency --timeout-ms 1)
lab_expect(latency.misuse.missing-value 2 latency --json)
