#!/usr/bin/env bash
# Installs what a make target needs on a Debian machine, or says exactly what
# is missing. `build`: compiler, cmake, make. `bench`: also the peer
# allocators the benchmark compares against (optional at run time: a missing
# peer is reported as missing, never a crash). `ci`: also the cross compiler
# for the freestanding check, 32-bit libraries for the -m32 run, pkg-config
# for the consumer builds, and the format/static-analysis tools.
# `check`: what `build` needs, only checked and reported, never installed
# (`make build` runs this one: installing is left to `make test`,
# `make bench` and this script called directly).
set -euo pipefail
what=${1:-build}

need_cmds=(cc cmake make)
need_pkgs=(gcc cmake make)
opt_pkgs=()
case "$what" in
  build|check) ;;
  bench) opt_pkgs=(libmimalloc2.0 libjemalloc2 libgoogle-perftools4 python3 python3-matplotlib) ;;
  ci)    opt_pkgs=(gcc-arm-none-eabi gcc-multilib clang-format cppcheck pkg-config
               sqlite3 git g++ python3 libpython3-testsuite clang) ;;
  *) echo "usage: scripts/deps.sh build|bench|ci|check" >&2; exit 2 ;;
esac

missing=()
for i in "${!need_cmds[@]}"; do
  command -v "${need_cmds[$i]}" >/dev/null 2>&1 || missing+=("${need_pkgs[$i]}")
done
opt_missing=()
for p in "${opt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || opt_missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && [ ${#opt_missing[@]} -eq 0 ] && exit 0

if [ "$what" = check ]; then
  echo "deps: missing required packages: ${missing[*]}" >&2
  echo "deps: \`make build\` installs nothing; \`make test\` installs them when run as root," \
       "or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  for p in "${opt_missing[@]}"; do
    apt-get install -y -qq "$p" >/dev/null 2>&1 \
      || echo "deps: optional package $p could not be installed; its peer will be reported as missing" >&2
  done
  exit 0
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: missing required packages: ${missing[*]}" >&2
  echo "deps: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "deps: optional peers not installed (benchmarks will report them missing): ${opt_missing[*]}" >&2
echo "deps: to compare against them: sudo apt-get install ${opt_missing[*]}" >&2
exit 0
