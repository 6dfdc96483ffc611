# SPDX-License-Identifier: MIT
# Every command's JSON, checked (docs/RESULTS.md): for each command, three
# ctest entries
#
#   lab.json.<name>.run     rtmem <command> --quick --json <build>/lab-json/<name>.json
#                           (a ctest fixture: the two checks below need it)
#   lab.json.<name>.schema  the file against docs/schema/<stem>.schema.json
#   lab.json.<name>.sane    the sanity rules (min <= median <= max, percentiles
#                           in order, every allocator row there)
#
# <stem> is the command with _ for space (bench_random); <name> is the stem,
# or bench_random_sweep for the --sweep mode (same schema). The checks skip
# (status 77) while a command has no schema yet (its run too: a command
# without one is still being written) or python3 is missing; the wcet run
# skips when rtmem-wcet is not built (it is x86-64 Linux only).
# The report itself has its own tests under tests/report/ (label "report").

# The system python first: quick to start (a pyenv shim takes a second per
# call) and the one Debian's python3-matplotlib installs into.
find_program(RTMEM_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(RTMEM_PYTHON3 NAMES python3)
set(lab_json_script ${PROJECT_SOURCE_DIR}/tests/report/quick_json.sh)
set(lab_json_dir ${PROJECT_BINARY_DIR}/lab-json)

# lab_json(name schema-stem command words...)
function(lab_json name stem)
  set(json ${lab_json_dir}/${name}.json)
  add_test(NAME lab.json.${name}.run
           COMMAND sh ${lab_json_script} run ${rtmem_lab_exe} ${PROJECT_SOURCE_DIR} ${stem}
                   ${json} ${ARGN})
  add_test(NAME lab.json.${name}.schema
           COMMAND sh ${lab_json_script} schema "${RTMEM_PYTHON3}" ${PROJECT_SOURCE_DIR} ${json}
                   ${stem})
  add_test(NAME lab.json.${name}.sane
           COMMAND sh ${lab_json_script} sane "${RTMEM_PYTHON3}" ${PROJECT_SOURCE_DIR} ${json})
  set_tests_properties(lab.json.${name}.run PROPERTIES FIXTURES_SETUP lab_json_${name}
                       SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS lab-json)
  set_tests_properties(lab.json.${name}.schema lab.json.${name}.sane
                       PROPERTIES FIXTURES_REQUIRED lab_json_${name} SKIP_RETURN_CODE 77
                                  LABELS lab-json)
endfunction()

lab_json(memcheck memcheck memcheck)
lab_json(bench_random bench_random bench random)
lab_json(bench_random_sweep bench_random bench random --sweep)
lab_json(bench_threads bench_threads bench threads)
lab_json(limits limits limits)
# Not in sanitizer builds, like wcet_quick (tools/wcet/CMakeLists.txt): there
# rtmem-wcet is a dynamic executable whose counts include the sanitizer's
# instrumentation, and its glibc rows cannot run at all.
if(NOT RTMEM_SANITIZE)
  lab_json(wcet wcet wcet)
endif()
lab_json(latency latency latency)
