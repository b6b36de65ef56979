#!/bin/sh
# check-sanitize.sh — hostile inputs and a fast test subset under a
# sanitizer, failing on any report found in the logs, not only on exit codes.
#
#   scripts/check-sanitize.sh SIMDEC_ASAN TESTS_ASAN      (make check-sanitize)
#       1. every invocation of docs/errors.md with the ASan/UBSan binary:
#          the documented exit status, no signal;
#       2. the Criterion suites in $SANITIZE_FILTER (hostile_table runs the same
#          rows again and compares the messages) with SIMDEC_BIN = the ASan
#          binary, so the CLI runs they make are instrumented too.
#       Every instrumented process — the CLI, the test runner and
#       Criterion's forked test children — writes its reports to log_path
#       files in one fresh directory.  Criterion does not fail a test whose
#       child leaks, and a child's LeakSanitizer report goes nowhere near
#       the test's verdict: so any "ERROR:" or "runtime error" in those logs
#       fails the run, whatever the exit statuses were.
#
#   scripts/check-sanitize.sh --valgrind SIMDEC             (make leakcheck)
#       valgrind --error-exitcode on every docs/errors.md invocation and on a
#       successful run of every command and verifier; definite and indirect
#       leaks and memory errors fail.
#
# Run from the repository root (the table's files are in tests/hostile/).
#   SANITIZE_FILTER   Criterion --filter of the subset
#   SANITIZE_TIMEOUT  seconds allowed per CLI invocation (default 120)
set -u

table=docs/errors.md
timeout_s=${SANITIZE_TIMEOUT:-120}
abspath() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
fail=0
note() { echo "check-sanitize: $*" >&2; }

# The table's rows as "EXIT<TAB>ARGS" (ARGS after the word simdec).
table_rows() {
    sed -n "s/\\\\|/@PIPE@/g; /^| /p" "$table" | awk -F'|' '
        NF == 6 {
            inv = $3; code = $4
            gsub(/^ +| +$/, "", inv); gsub(/^ +| +$/, "", code)
            if (inv !~ /^`simdec/ || code !~ /^[0-9]+$/) next
            inv = substr(inv, 2, length(inv) - 2)
            sub(/^simdec */, "", inv)
            gsub(/@PIPE@/, "|", inv)
            print code "\t" inv
        }'
}

[ -r "$table" ] || { note "cannot read $table: run from the repository root"; exit 1; }
nrows=$(table_rows | wc -l)
[ "$nrows" -ge 100 ] || { note "only $nrows rows parsed from $table"; exit 1; }

if [ "${1:-}" = "--valgrind" ]; then
    bin=$(abspath "$2")
    command -v valgrind >/dev/null || { note "valgrind is not installed"; exit 1; }
    vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    run_vg() { # expected-exit args...
        want=$1
        shift
        eval "timeout -s KILL $((timeout_s * 4)) $vg \"\$bin\" $*" >"$tmp/out" 2>"$tmp/err" </dev/null
        st=$?
        # -q leaves only errors on ==PID== lines (and warnings such as
        # "set address range perms", which are not findings).
        grep '^==[0-9]*== ' "$tmp/err" | grep -v '^==[0-9]*== Warning: ' >"$tmp/vg"
        if [ "$st" -eq 99 ] || [ -s "$tmp/vg" ]; then
            note "valgrind report for 'simdec $*':"
            head -n 30 "$tmp/vg" >&2
            fail=1
        elif [ "$want" != any ] && [ "$st" -ne "$want" ]; then
            note "'simdec $*' exited $st under valgrind, expected $want"
            fail=1
        fi
    }
    n=0
    while IFS="$(printf '\t')" read -r code args; do
        run_vg "$code" "$args"
        n=$((n + 1))
    done <<EOF
$(table_rows)
EOF
    # Success paths: every verifier, every evaluator, gen, check, lp.
    for algo in $("$bin" run --list | awk 'NR > 1 { print $1 }'); do
        run_vg 0 "run --algo $algo --V 3 --T 6 --trials 300 --threads 2"
        n=$((n + 1))
    done
    for args in "gen --V 3 --T 2 -o $tmp/m.json" "run --model $tmp/m.json --trials 100" \
        "eval rejections" "eval rejections --M 3" "eval batch-improvement --M 2" \
        "eval pareto --eps 0.1" "eval accept-length --gamma 3" "eval acceptance --k 2" \
        "eval sprinter --tp 0.5 --fp 0.1 --r 3 --p 0.5,0.5 --q 0.2,0.8" \
        "check --algo block --V 3 --T 3 --trials 2000" \
        "lp otm --k 2 --p 0.5,0.3,0.2 --q 0.2,0.3,0.5" \
        "lp block-ot --gamma 2 --p 0.5,0.5 --q 0.2,0.8" \
        "lp valid-verify --gamma 2 --p 0.5,0.5 --q 0.2,0.8" \
        "lp pareto --reject 0.1 --p 0.5,0.5 --q 0.2,0.8"; do
        run_vg 0 "$args"
        n=$((n + 1))
    done
    [ $fail -eq 0 ] && note "valgrind: $n invocations, no error, no definite or indirect leak"
    exit $fail
fi

bin=$(abspath "$1")
tests=$(abspath "$2")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# allocator_may_return_null: an impossible request returns NULL as glibc
# does, so the program's own out-of-memory path is what gets tested.
ASAN_OPTIONS="detect_leaks=1:log_path=$logs/asan:allocator_may_return_null=1:check_initialization_order=1:strict_string_checks=1:detect_stack_use_after_return=1"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan"
LSAN_OPTIONS="log_path=$logs/lsan"
export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS

# 1. The documented hostile invocations.
n=0
while IFS="$(printf '\t')" read -r code args; do
    eval "timeout -s KILL $timeout_s \"\$bin\" $args" >/dev/null 2>"$logs/stderr" </dev/null
    st=$?
    if [ "$st" -ne "$code" ]; then
        note "'simdec $args': exit $st under the sanitizers, documented $code"
        head -n 5 "$logs/stderr" >&2
        fail=1
    fi
    n=$((n + 1))
done <<EOF
$(table_rows)
EOF
rm -f "$logs/stderr"
note "$n hostile invocations run"

# 2. The Criterion subset, with the CLI it runs instrumented as well.
SIMDEC_BIN=$bin
export SIMDEC_BIN
filter=${SANITIZE_FILTER:-hostile_*}
timeout -s KILL 1200 "$tests" --jobs 2 --filter "$filter" 2>"$logs/criterion.out"
st=$?
grep -v '^\[----\]   *$' "$logs/criterion.out" | grep -E '^\[(FAIL|----)\]|Synthesis|CRASH' >&2
tested=$(sed -n 's/.*Synthesis: Tested: \([0-9][0-9]*\).*/\1/p' "$logs/criterion.out" | tail -n 1)
rm -f "$logs/criterion.out"
if [ -z "$tested" ] || [ "$tested" -eq 0 ]; then
    note "no test ran under the sanitizers (filter '$filter')"
    fail=1
elif [ "$st" -ne 0 ]; then
    note "the Criterion subset failed under the sanitizers (exit $st)"
    fail=1
fi

# 3. The logs: any report fails, even from a process that exited 0.
reports=$(grep -l -E 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|SUMMARY: ' "$logs"/* 2>/dev/null)
if [ -n "$reports" ]; then
    for r in $reports; do
        note "sanitizer report $(basename "$r"):"
        head -n 40 "$r" >&2
    done
    fail=1
fi
[ $fail -eq 0 ] && note "no sanitizer report ($n CLI cases, $tested tests, filter '$filter')"
exit $fail
