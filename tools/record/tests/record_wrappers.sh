#!/bin/sh
# SPDX-License-Identifier: MIT
# record_wrappers.sh -- `rtmem record` through what real-time programs are
# launched with, and the files a recording leaves (docs/TRACE.md): one
# CASE per ctest entry (tools/lab/trace/tests_trace.cmake).
#
#   taskset nice env chrt sh-exec script python
#                  the wrapper execs rec_prog in the same process: the named
#                  FILE holds rec_prog's calls (rec_check), its header names
#                  rec_prog, `trace stats` shows them, the index shows the
#                  wrapper's start and the exec, and no per-pid file appears
#   exec-<fn>      rec_exec replaces itself by rec_prog through <fn>: its own
#                  calls (buffered when it execs) come first in FILE
#   final-only     the same with --final-only: only rec_prog's calls
#   clearenv       rec_exec execs with an empty environment: the summary
#                  says why rec_prog was not recorded
#   env-i          the same through `env -i`
#   children       rec_exec starts rec_prog twice (fork + execv, and fork +
#                  sh -c 'exec ...'): two traces FILE.<pid>.lab_rec_prog, each
#                  rec_prog's whole run, listed in the index and the summary
#   no-children    the same with --no-children: no child traces
#   stale          child traces an earlier run left under the same name are
#                  removed and not counted; a file that is not a trace stays
#   static         rec_exec execs a static build of rec_prog (given as
#                  REC_PROG): the summary says it did not load the recorder
#
# usage: record_wrappers.sh CASE RTMEM REC_PROG REC_EXEC REC_CHECK DIR
# Exit 0 pass, 1 fail, 77 skip (a wrapper that cannot run here).
set -u
[ $# -eq 6 ] || { echo "usage: $0 CASE RTMEM REC_PROG REC_EXEC REC_CHECK DIR" >&2; exit 2; }
case=$1 rtmem=$2 prog=$3 rexec=$4 check=$5 dir=$6
out=$dir/wrap-$case.trace
err=$dir/wrap-$case.stderr
lib=$(dirname "$rtmem")/librtmem-record.so

fail() { echo "FAIL ($case): $*" >&2; exit 1; }
skip() { echo "SKIP ($case): $*" >&2; exit 77; }

# rtmem record OPTIONS... -- COMMAND...; sets rc, shows the summary.
record() {
    "$rtmem" record -o "$out" "$@" 2>"$err"
    rc=$?
    cat "$err" >&2
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "rtmem record exit $rc, expected $1"; }

# FILE's calls: rec_check MODE, the header's program, trace stats.
check_trace() { # TRACE MODE PROGRAM
    "$check" "$1" "$2" "$3" >&2 || fail "rec_check $2 on $1"
    "$rtmem" trace stats "$1" >"$dir/wrap-$case.stats" || fail "trace stats $1: exit $?"
    grep -q "(program $3," "$dir/wrap-$case.stats" || fail "trace stats does not name $3"
    calls=$(sed -n 's/^calls: \([0-9][0-9]*\) .*/\1/p' "$dir/wrap-$case.stats")
    [ "${calls:-0}" -gt 0 ] || fail "trace stats shows no calls"
}

# No trace but FILE: the exec went on in it.
no_child_traces() {
    for f in "$out".[0-9]*; do
        [ -e "$f" ] && [ "$(head -c 8 "$f")" = RTMTRACE ] && fail "a per-process trace appeared: $f"
    done
    grep -q "child process" "$err" && fail "the summary counts child processes"
    return 0
}

# The index: WRAPPER started FILE, rec_prog went on in it by exec.
index_shows() { # WRAPPER
    base=$(basename "$out")
    grep -q "^start [0-9]* [0-9]* $base $1\$" "$out.index" || fail "index: no start of $1"
    grep -q "^exec [0-9]* [0-9]* $base lab_rec_prog\$" "$out.index" ||
        fail "index: no exec of lab_rec_prog in $base"
}

# System wrappers load this build's recorder only when it is built for the
# system's programs (not in a -m32 or cross build).
native() {
    probe=$(LD_PRELOAD=$lib true 2>&1)
    [ -z "$probe" ] || skip "system programs cannot load $lib: $probe"
}

wrapper() { # WRAPPER-NAME COMMAND...
    name=$1
    shift
    native
    record -- "$@"
    expect_rc 3
    check_trace "$out" c lab_rec_prog
    index_shows "$name"
    no_child_traces
}

case $case in
taskset)
    command -v taskset >/dev/null || skip "no taskset"
    mask=$(taskset -p $$ | sed 's/.*: //')
    wrapper taskset taskset "$mask" "$prog" ;;
nice) wrapper nice nice -n 1 "$prog" ;;
env) wrapper env env RTMEM_TEST=1 "$prog" ;;
chrt)
    command -v chrt >/dev/null || skip "no chrt"
    chrt -f 1 true 2>/dev/null || skip "SCHED_FIFO not permitted here"
    wrapper chrt chrt -f 1 "$prog" ;;
sh-exec) wrapper "$(basename "$(readlink -f /bin/sh)")" sh -c 'exec "$0"' "$prog" ;;
script)
    printf '#!/bin/sh\n# a launcher script\nexec "$@"\n' >"$dir/wrap-launcher.sh"
    chmod +x "$dir/wrap-launcher.sh"
    wrapper "$(basename "$(readlink -f /bin/sh)")" "$dir/wrap-launcher.sh" "$prog" ;;
python)
    # the interpreter itself, not a shim in front of it (pyenv's is a bash
    # script: recorded too, but with its own children)
    py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || skip "no python3"
    py=$(readlink -f "$py")
    wrapper "$(basename "$py")" "$py" -c 'import os, sys; os.execv(sys.argv[1], sys.argv[1:])' "$prog" ;;
exec-*)
    PATH=$(dirname "$prog"):$PATH
    export PATH
    record -- "$rexec" "${case#exec-}" "$prog"
    expect_rc 3
    check_trace "$out" exec lab_rec_prog
    index_shows lab_rec_exec
    no_child_traces ;;
final-only)
    record --final-only -- "$rexec" execv "$prog"
    expect_rc 3
    check_trace "$out" final lab_rec_prog
    grep -q "final-only left out" "$err" || fail "the summary does not say what --final-only left out"
    no_child_traces ;;
clearenv | env-i)
    if [ "$case" = env-i ]; then
        native
        record -- env -i "$prog"
    else
        record -- "$rexec" clearenv "$prog"
    fi
    expect_rc 3
    grep -q "ran without the recorder: its environment dropped LD_PRELOAD" "$err" ||
        fail "no word on why $prog was not recorded"
    grep -q "$prog (pid" "$err" || fail "the summary does not name $prog" ;;
static)
    # REC_PROG is a static build of rec_prog here
    record -- "$rexec" execv "$prog"
    expect_rc 3
    grep -q "$prog (pid [0-9]*) did not load the recorder" "$err" ||
        fail "no word on why the static $prog was not recorded"
    "$rtmem" trace stats "$out" | grep -q "(program lab_rec_exec," ||
        fail "the trace's header names another program than lab_rec_exec" ;;
children | no-children)
    opt=
    [ "$case" = no-children ] && opt=--no-children
    record $opt -- "$rexec" spawn "$prog"
    expect_rc 0
    check_trace "$out" spawn lab_rec_exec
    set -- "$out".[0-9]*.lab_rec_prog
    if [ "$case" = no-children ]; then
        [ -e "$1" ] && fail "--no-children: a child trace appeared: $1"
        grep -q "child process" "$err" && fail "--no-children: the summary counts children"
        exit 0
    fi
    [ $# -eq 2 ] && [ -e "$1" ] && [ -e "$2" ] || fail "expected 2 child traces, got: $*"
    [ "$1" != "$2" ] || fail "the two children share a trace"
    for f in "$@"; do
        check_trace "$f" c lab_rec_prog
        grep -q "^rtmem record:   $f: [1-9][0-9]* calls (pid [0-9]*, parent " "$err" ||
            fail "the summary does not list $f"
    done
    grep -q "2 child processes recorded" "$err" || fail "the summary does not count 2 children"
    # sh's trace was renamed after the program it exec'd
    for f in "$out".[0-9]*; do
        case $f in *.lab_rec_prog) ;; *) fail "a child trace not named after its program: $f" ;; esac
    done
    main=$(sed -n 's/^start \([0-9]*\) [0-9]* wrap-children.trace lab_rec_exec$/\1/p' "$out.index")
    [ -n "$main" ] || fail "index: no start of the parent"
    kids=$(grep -c "^start [0-9]* $main wrap-children.trace\.[0-9]*\.[a-z_]* " "$out.index")
    [ "$kids" -eq 2 ] || fail "index: $kids children of $main, expected 2" ;;
stale)
    # an earlier run's child traces (copies of a real one) and a user's note
    record -- "$prog"
    expect_rc 3
    cp "$out" "$out.99999"
    cp "$out" "$out.99998.lab_rec_prog"
    echo "not a trace" >"$out.1.notes"
    record -- "$prog"
    expect_rc 3
    check_trace "$out" c lab_rec_prog
    [ -e "$out.99999" ] && fail "the stale $out.99999 is still there"
    [ -e "$out.99998.lab_rec_prog" ] && fail "the stale $out.99998.lab_rec_prog is still there"
    [ -e "$out.1.notes" ] || fail "$out.1.notes, not a trace, was removed"
    no_child_traces ;;
*) echo "unknown case $case" >&2; exit 2 ;;
esac
exit 0
