# SPDX-License-Identifier: MIT
# Tests of the report tooling (scripts/validate_json.py, scripts/report.py,
# scripts/schema_doc.py) on the small fixtures beside this file. Included by
# tests/CMakeLists.txt. Every test is skipped (status 77) when python3 is
# missing: the library and the lab do not need it, only the report does.
#
#   report.validate.*   the validator on fixtures that must pass or fail, each
#                       failure with the path of the offending value
#   report.sane.*       the sanity rules (min <= median <= max, percentiles
#                       in order, per-command completeness)
#   report.schemas      every docs/schema/*.schema.json keeps to the subset
#                       and describes every property
#   report.results_md   docs/RESULTS.md matches the schemas (schema_doc.py)
#   report.html         report.py on a fixture run folder: index.html with
#                       every section, "not run" for absent commands, charts
#                       when matplotlib is there

# The system python first (see tools/lab/tests_report.cmake).
find_program(RTMEM_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(RTMEM_PYTHON3 NAMES python3)
set(report_dir ${CMAKE_CURRENT_LIST_DIR})
set(report_fix ${report_dir}/fixtures)
set(report_scripts ${PROJECT_SOURCE_DIR}/scripts)

# report_test(name args...): a python3 test, or a skip when there is none.
function(report_test name)
  if(RTMEM_PYTHON3)
    add_test(NAME report.${name} COMMAND ${RTMEM_PYTHON3} ${ARGN})
  else()
    add_test(NAME report.${name} COMMAND sh -c "echo 'python3 not found: skipped'; exit 77")
  endif()
  set_tests_properties(report.${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS report)
endfunction()

# report_expect(name status text validator-args...): the validator's exit
# status must be `status` and its output must contain `text`.
function(report_expect name status text)
  report_test(${name} ${report_dir}/expect.py ${status} "${text}" -- ${RTMEM_PYTHON3}
              ${report_scripts}/validate_json.py ${ARGN})
endfunction()

set(schema ${report_fix}/schema.json)
report_expect(validate.good 0 "ok (schema)" ${schema} ${report_fix}/good.json)
report_expect(validate.type 1 "$.count: expected integer, got \"3\"" ${schema}
              ${report_fix}/bad_type.json)
report_expect(validate.integer 1 "$.count: expected integer, got 1.5" ${schema}
              ${report_fix}/bad_integer.json)
report_expect(validate.null 1 "$.flag: expected boolean, got null" ${schema}
              ${report_fix}/bad_null.json)
report_expect(validate.required 1 "$: required property 'count' is missing" ${schema}
              ${report_fix}/bad_required.json)
report_expect(validate.enum 1 "$.command: \"other\" is not one of" ${schema}
              ${report_fix}/bad_enum.json)
report_expect(validate.minimum 1 "$.count: -1 is below the minimum 0" ${schema}
              ${report_fix}/bad_minimum.json)
report_expect(validate.maximum 1 "$.count: 11 is above the maximum 10" ${schema}
              ${report_fix}/bad_maximum.json)
report_expect(validate.additional 1 "$: property 'surprise' is not in the schema" ${schema}
              ${report_fix}/bad_additional.json)
report_expect(validate.additional-nested 1 "$.rows[0]: property 'colour' is not in the schema"
              ${schema} ${report_fix}/bad_nested_additional.json)
report_expect(validate.additional-schema 1 "$.extra.x: expected integer" ${schema}
              ${report_fix}/bad_additional_schema.json)
report_expect(validate.items 1 "$.rows[1].value: -2 is below the minimum 0" ${schema}
              ${report_fix}/bad_items.json)
report_expect(validate.nan 1 "NaN is not JSON" ${schema} ${report_fix}/bad_nan.json)
report_expect(validate.schema-keyword 2 "keyword 'minItems' is outside" 
              ${report_fix}/schema_bad_keyword.json ${report_fix}/good.json)
report_expect(validate.schema-nested 2 "#/properties/a/items: keyword 'minLength'"
              ${report_fix}/schema_bad_nested.json ${report_fix}/good.json)
report_expect(validate.schema-type 2 "unknown type 'float'" ${report_fix}/schema_bad_type.json
              ${report_fix}/good.json)
report_expect(validate.misuse 2 "usage:" --bogus)

report_expect(sane.good 0 "ok (sanity)" --sane-only ${report_fix}/sane.json)
report_expect(sane.median 1 "$.time: median 5 is not within min 1 .. max 4" --sane-only
              ${report_fix}/insane_median.json)
report_expect(sane.avg 1 "$.time: avg 0.5 is not within" --sane-only
              ${report_fix}/insane_avg.json)
report_expect(sane.negative 1 "$.time: min -1 is negative" --sane-only
              ${report_fix}/insane_negative.json)
report_expect(sane.spread 1 "$.time: spread 3 is not max/min" --sane-only
              ${report_fix}/insane_spread.json)
report_expect(sane.percentiles 1 "$.lat: p999 20 is below p99 30" --sane-only
              ${report_fix}/insane_percentiles.json)
report_expect(sane.percentile-max 1 "$.lat: max 25 is below p99 30" --sane-only
              ${report_fix}/insane_percentile_max.json)
report_expect(sane.random 1 "$.allocators: no row for 'glibc'" --sane-only
              ${report_fix}/insane_random.json)
report_expect(sane.memcheck 1 "rows[1]: 2 values for 3 row_fields" --sane-only
              ${report_fix}/insane_memcheck.json)

report_test(schemas ${report_scripts}/schema_doc.py --lint)
report_test(results_md ${report_scripts}/schema_doc.py --check)
report_test(html ${report_dir}/test_report.py ${report_scripts}/report.py ${report_fix}/run
            ${CMAKE_CURRENT_BINARY_DIR}/report-fixture)
