#!/bin/sh
# Builds the cronie oracle: cronie's own entry parser (src/entry.c, env.c, pw_dup.c of a
# cronie checkout, given as $1) compiled with harness.c, which prints how it reads each
# schedule. cronie is not packaged for Debian, so the suite compares with the answers
# recorded in tests/golden/cronie_entry.json (scripts/record_oracles.py --cronie).
set -eu
src=${1:?usage: build.sh CRONIE_CHECKOUT [OUT]}
out=${2:-${JOBSAFE_ORACLES:-$HOME/.cache/jobsafe-oracles}/cronie-harness}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cp -r "$src/src" "$here/harness.c" "$here/config.h" "$here/cron-paths.h" "$work/"
gcc -O1 -w -I"$work" -I"$work/src" -o "$out" "$work/harness.c" "$work/src/env.c" \
    "$work/src/pw_dup.c"
rm -rf "$work"
echo "$out"
