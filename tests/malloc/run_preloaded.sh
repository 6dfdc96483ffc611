#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/malloc/run_preloaded.sh LIB WORKLOAD -- runs a real program's
# workload twice, plainly and with LD_PRELOAD=LIB (build/librtmem-malloc.so),
# and fails unless both succeed with the same output. Before that it checks
# that the preload takes effect in that program (RTMEM_SHOW_STATS=1 makes the
# library print its statistics at exit): a preload the loader ignored would
# otherwise pass by comparing glibc with glibc.
#
# Workloads: python (a list of CPython's own regression tests: containers,
# strings, json, gc, threads), sqlite (inserts, indexes, joins,
# aggregates over 100k rows), git (a scratch repository: commits, branches,
# merge, gc, fsck, log), gcc (a large generated C file at -O2, and a C++ file
# using the standard library, whose compiler cc1plus uses operator new).
# Exit 77 (ctest SKIP_RETURN_CODE) when the program is not installed.
set -u
lib=$1
what=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

# The preload must reach the program itself.
check_preload() {
    local err
    err=$(LD_PRELOAD=$lib RTMEM_SHOW_STATS=1 "$@" 2>&1 >/dev/null)
    grep -q "^rtmem-malloc stats: " <<<"$err" \
        || fail "LD_PRELOAD=$lib did not take effect in: $*"
}

# run_both NAME CMD...: runs CMD in fresh copies of $tmp/work, plain and
# preloaded; the normalised outputs must be equal and both must succeed.
run_both() {
    local name=$1
    shift
    for mode in plain rtmem; do
        rm -rf "$tmp/run"
        mkdir -p "$tmp/run"
        [ -d "$tmp/work" ] && cp -a "$tmp/work/." "$tmp/run/"
        local t0=$SECONDS rc=0
        if [ $mode = plain ]; then
            (cd "$tmp/run" && "$@") >"$tmp/$mode.out" 2>&1 || rc=$?
        else
            (cd "$tmp/run" && LD_PRELOAD=$lib "$@") >"$tmp/$mode.out" 2>&1 || rc=$?
        fi
        echo "$name [$mode]: exit $rc in $((SECONDS - t0)) s"
        if [ $rc -ne 0 ]; then
            tail -30 "$tmp/$mode.out"
            fail "$name failed ($mode)"
        fi
    done
    if ! diff -q "$tmp/plain.out" "$tmp/rtmem.out" >/dev/null; then
        diff "$tmp/plain.out" "$tmp/rtmem.out" | head -40
        fail "$name: outputs differ with and without LD_PRELOAD"
    fi
}

case "$what" in
python)
    need python3
    py=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 does not run"
    "$py" -c 'import test.libregrtest' 2>/dev/null || skip "CPython's test package is not installed"
    check_preload "$py" -c 'pass'
    # The summary line only: timings differ from run to run.
    cat >"$tmp/pytest.sh" <<PYEOF
"$py" -m test -q test_list test_dict test_deque test_heapq test_bisect test_string \
    test_json test_gc test_thread test_threading_local 2>&1 \
    | grep -E "tests? OK|Tests result|FAIL|failed"
exit \${PIPESTATUS[0]}
PYEOF
    run_both "CPython regression tests" bash "$tmp/pytest.sh"
    ;;
sqlite)
    need sqlite3
    check_preload sqlite3 :memory: 'select 1;'
    cat >"$tmp/work.sql" <<'SQLEOF'
PRAGMA cache_size = -20000;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, s TEXT, b BLOB);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
INSERT INTO t(k, s, b) SELECT (x * 7919) % 10007, printf('row-%08d-%s', x, hex(x * x)),
       zeroblob(x % 300) FROM c;
CREATE INDEX t_k ON t(k);
CREATE INDEX t_s ON t(s);
CREATE TABLE u AS SELECT k, count(*) AS n, sum(length(s)) AS l, group_concat(id, ',') AS ids
    FROM t GROUP BY k;
SELECT count(*), sum(n), sum(l), sum(length(ids)) FROM u;
SELECT k, n, l FROM u ORDER BY n DESC, k LIMIT 5;
SELECT count(*) FROM t JOIN u USING (k) WHERE t.id % 97 = 0;
UPDATE t SET s = upper(s) || s WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(length(s)), sum(length(b)) FROM t;
SELECT s FROM t ORDER BY s DESC LIMIT 3;
VACUUM;
SELECT count(*) FROM t WHERE s LIKE '%-0000%';
SQLEOF
    run_both "sqlite3 workload" sqlite3 db.sqlite ".read $tmp/work.sql"
    ;;
git)
    need git
    check_preload git --version
    cat >"$tmp/git.sh" <<'GITEOF'
set -e
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t
export GIT_COMMITTER_EMAIL=t@example.com GIT_CONFIG_NOSYSTEM=1 HOME=$PWD
export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
git init -q -b main repo
cd repo
for c in $(seq 1 16); do
    for f in $(seq 1 12); do
        seq $((c * f)) $((c * f + 200)) | sed "s/^/line $c $f /" > "file$f.txt"
    done
    git add -A
    git commit -q -m "commit $c"
    if [ $c = 8 ]; then git checkout -q -b side; fi
    if [ $c = 12 ]; then git checkout -q main; fi
done
git merge -q --no-edit -s ours side
git log --oneline --graph | head -50
git diff --stat HEAD~6 HEAD
git gc -q --aggressive
git fsck --full --strict
git count-objects -v | grep -v size
git rev-list --all --objects | sort | sha256sum
git blame file3.txt | sha256sum
GITEOF
    run_both "git on a scratch repository" bash "$tmp/git.sh"
    ;;
gcc)
    need gcc
    check_preload gcc --version
    mkdir -p "$tmp/work"
    # A large file: many functions with switches, loops and string tables.
    awk 'BEGIN {
        print "#include <string.h>";
        for (f = 0; f < 400; f++) {
            printf "static const char *names%d[] = {", f;
            for (i = 0; i < 20; i++) printf "\"n%d_%d\",", f, i;
            print "};";
            printf "int fn%d(int x, char *buf) {\n  int acc = %d;\n", f, f;
            print "  for (int i = 0; i < x; i++) {";
            print "    switch ((i + acc) % 7) {";
            for (c = 0; c < 7; c++) printf "    case %d: acc = acc * %d + i; break;\n", c, c + 3;
            print "    }";
            printf "    if (acc %% 13 == 0) strcpy(buf, names%d[i %% 20]);\n", f;
            print "  }";
            printf "  return acc ^ (int)strlen(buf) ^ fn%d_helper(acc);\n}\n", f;
        }
    }' /dev/null | awk '/fn[0-9]+_helper/ { n = $0; gsub(/.*\^ /, "", n) } { print }' \
        | sed 's/ ^ fn[0-9]*_helper(acc)//' >"$tmp/work/big.c"
    cat >"$tmp/work/stl.cpp" <<'CPPEOF'
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>
template <int N> struct Deep { std::map<std::string, std::vector<int>> m; int f() { return Deep<N - 1>().f() + N; } };
template <> struct Deep<0> { int f() { return 0; } };
int main() {
    std::unordered_map<std::string, std::unique_ptr<std::vector<double>>> u;
    for (int i = 0; i < 100; i++) u[std::to_string(i)] = std::make_unique<std::vector<double>>(i);
    std::vector<std::string> keys;
    for (auto &kv : u) keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end());
    return Deep<60>().f() + (int)keys.size();
}
CPPEOF
    cat >"$tmp/gcc.sh" <<'GCCEOF'
set -e
gcc -O2 -c big.c -o big.o
sha256sum big.o
if command -v g++ >/dev/null 2>&1; then
    g++ -O2 -c stl.cpp -o stl.o
    sha256sum stl.o
fi
GCCEOF
    run_both "gcc -O2 on a large file" bash "$tmp/gcc.sh"
    ;;
*)
    echo "usage: $0 LIB python|sqlite|git|gcc" >&2
    exit 2
    ;;
esac
echo "PASS: $what gives the same results with $lib preloaded"
