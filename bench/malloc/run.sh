#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/malloc/run.sh -- the drop-in malloc against glibc and the installed
# peers on small workload programs of our own (this folder): large blocks
# (large.c), false sharing (thrash.c: thrash and scratch), single-thread
# small-object churn (churn.c). Each allocator is loaded by LD_PRELOAD
# (glibc: none); runs are interleaved (round r runs every workload under
# every allocator before round r+1), so a noisy neighbour hits all alike.
# Measured by /usr/bin/time: CPU time (user + system) and max RSS.
#
# usage: bench/malloc/run.sh [BUILD_DIR [ROUNDS]]   (build, 5)
#   MALLOC_EXTRA="name=/path/lib.so ..."  more allocators (e.g. an older rtmem)
#   MALLOC_WORKLOADS="large churn"        a subset
#   MALLOC_QUICK=1                        short runs (a smoke test)
# bench/malloc/run.sh --summary BUILD_DIR/bench-malloc/runs.txt reprints the
# table of the last (or an interrupted) run.
# Prints, per workload and allocator, min and median CPU seconds and median
# max RSS (MiB), then rtmem's median over each peer's (< 1: rtmem better).
# Exit 2 on misuse, 1 when a run fails.
set -uo pipefail

usage() { echo "usage: $0 [BUILD_DIR [ROUNDS]] | $0 --summary RUNS_FILE" >&2; exit 2; }
[ $# -le 2 ] || usage

# Min/median per (workload, allocator), then ratios of rtmem's medians.
summary() { # RUNS_FILE ORDER: the table of a runs file
awk -v order="$2" '
  function isort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
  function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { k = $1 SUBSEP $2; n[k]++; cpu[k, n[k]] = $3; rss[k, n[k]] = $4
    if (!($1 in seen)) { seen[$1] = 1; wl[++nw] = $1 } }
  END {
    na = split(order, al, " ")
    for (i = 1; i <= na; i++) sub(/=.*/, "", al[i])
    printf "%-8s %-9s %9s %9s %9s %8s %8s\n", "workload", "allocator", "cpu min", "cpu med", "rss MiB", "cpu x", "rss x"
    for (w = 1; w <= nw; w++) {
      r = wl[w] SUBSEP "rtmem"
      for (i = 1; i <= na; i++) {
        k = wl[w] SUBSEP al[i]; if (!(k in n)) continue
        split("", c); split("", m)
        for (j = 1; j <= n[k]; j++) { c[j] = cpu[k, j]; m[j] = rss[k, j] }
        isort(c, n[k]); isort(m, n[k])
        mc[k] = med(c, n[k]); mr[k] = med(m, n[k]) / 1024; mn[k] = c[1]
      }
      for (i = 1; i <= na; i++) {
        k = wl[w] SUBSEP al[i]; if (!(k in n)) continue
        rx = (al[i] == "rtmem" || mc[k] == 0) ? "" : sprintf("%.2f", mc[r] / mc[k])
        rr = (al[i] == "rtmem" || mr[k] == 0) ? "" : sprintf("%.2f", mr[r] / mr[k])
        printf "%-8s %-9s %9.2f %9.2f %9.1f %8s %8s\n", wl[w], al[i], mn[k], mc[k], mr[k], rx, rr
      }
    }
    print "cpu x, rss x: rtmem median / this allocator median (< 1: rtmem better)"
  }' "$1"
}

if [ "${1:-}" = --summary ]; then
  [ $# -eq 2 ] && [ -f "$2" ] || usage
  summary "$2" "glibc rtmem mimalloc jemalloc tcmalloc $(awk '{print $2}' "$2" | sort -u | grep -vxE 'glibc|rtmem|mimalloc|jemalloc|tcmalloc' | tr '\n' ' ')"
  exit 0
fi
build=${1:-build}
rounds=${2:-5}
case $rounds in '' | *[!0-9]* | 0) usage ;; esac
here=$(cd "$(dirname "$0")" && pwd)
rtmem=$build/librtmem-malloc.so
[ -f "$rtmem" ] || { echo "run.sh: $rtmem not found (build first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }
rtmem=$(cd "$(dirname "$rtmem")" && pwd)/$(basename "$rtmem")

bin=$build/bench-malloc
mkdir -p "$bin"
for w in large thrash churn; do
  cc -O2 -std=c11 -D_GNU_SOURCE -o "$bin/$w" "$here/$w.c" -lpthread || exit 1
done

# name=library ("" = glibc); peers only when installed.
lib=/usr/lib/x86_64-linux-gnu
allocs=("glibc=" "rtmem=$rtmem")
for peer in mimalloc=$lib/libmimalloc.so.2 jemalloc=$lib/libjemalloc.so.2 \
            tcmalloc=$lib/libtcmalloc_minimal.so.4; do
  [ -f "${peer#*=}" ] && allocs+=("$peer")
done
for extra in ${MALLOC_EXTRA:-}; do allocs+=("$extra"); done

# name|command line (relative to $bin)
if [ "${MALLOC_QUICK:-0}" = 1 ]; then
  load=("large|large 20" "thrash|thrash thrash 2 2000 200" "scratch|thrash scratch 2 2000 200"
        "churn|churn 300000")
else
  load=("large|large 200" "thrash|thrash thrash 2 20000 1000" "scratch|thrash scratch 2 20000 1000"
        "churn|churn 8000000")
fi
want=" ${MALLOC_WORKLOADS:-large thrash scratch churn} "

# One line per run ("workload allocator cpu_s maxrss_kib"), kept for a
# second look (and so an interrupted run leaves what it measured).
raw=$bin/runs.txt
: >"$raw"
status=0
for ((r = 1; r <= rounds; r++)); do
  for l in "${load[@]}"; do
    name=${l%%|*}
    [[ $want == *" $name "* ]] || continue
    for a in "${allocs[@]}"; do
      out=$(cd "$bin" && LD_PRELOAD=${a#*=} /usr/bin/time -f "@@ %U %S %M" ./${l#*|} 2>&1 >/dev/null)
      rc=$?
      m=$(printf '%s\n' "$out" | awk '/^@@/ {print $2 + $3, $4}')
      if [ $rc -ne 0 ] || [ -z "$m" ]; then
        echo "run.sh: $name under ${a%%=*} failed (exit $rc): $out" >&2
        status=1
        continue
      fi
      echo "$name ${a%%=*} $m" >>"$raw"
    done
  done
  echo "round $r of $rounds done" >&2
done

summary "$raw" "${allocs[*]}"
exit $status
