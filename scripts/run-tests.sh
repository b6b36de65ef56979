#!/bin/sh
# run-tests.sh TESTBIN SIMDEC — runs the Criterion suite and fails when it
# fails, crashes, or runs no test at all (Criterion exits 0 when a filter
# matches nothing and prints its summary on stderr).
#   CRITERION_ARGS   extra arguments, e.g. --filter 'chain/*'
set -u
# CRITERION_ARGS is split into words but not globbed: '--filter docs/*' must
# reach Criterion as written, not as the files of docs/.
set -f
testbin=$1
simdec=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
SIMDEC_BIN=$(cd "$(dirname "$simdec")" && pwd)/$(basename "$simdec")
export SIMDEC_BIN
testbin=$(cd "$(dirname "$testbin")" && pwd)/$(basename "$testbin")
# Tests read repository files (README.md, examples/, plots/) by relative path.
cd "$(dirname "$0")/.." || exit 1
"$testbin" --jobs 2 ${CRITERION_ARGS:-} 2>"$log"
status=$?
cat "$log" >&2
tested=$(sed -n 's/.*Synthesis: Tested: \([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$tested" ] || [ "$tested" -eq 0 ]; then
    echo "run-tests: no test ran" >&2
    exit 1
fi
# The counts, for the closing line of `make check` (TEST_SUMMARY=file).
if [ -n "${TEST_SUMMARY:-}" ]; then
    sed -n 's/.*Synthesis: Tested: [0-9]* | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' \
        "$log" | tail -n 1 >"$TEST_SUMMARY"
fi
exit $status
