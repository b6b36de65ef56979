#!/bin/sh
# layers-selftest.sh — shows that scripts/layers.py fails where it must
# (`make check` runs it after `make layers`):
#   1. a copy of the sources passes, and fails, naming the file and the
#      header, once src/sd_chain.c includes ../sims/engine/sd_sim.h;
#   2. a tree of three tiny objects fails naming an upward call (src/ calling
#      a function defined in sims/) and two files that call each other.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "layers-selftest: $*" >&2; exit 1; }

# 1. an injected upward include
(cd "$here" && find src lp sims include treelp bench plots cli mpi fuzz python \
     -name '*.[ch]' 2>/dev/null) | while read -r f; do
    mkdir -p "$tmp/tree/$(dirname "$f")" && cp "$here/$f" "$tmp/tree/$f"
done
"$py" "$here/scripts/layers.py" --root "$tmp/tree" --no-objects >/dev/null 2>"$tmp/out" ||
    fail "the copied tree should pass: $(cat "$tmp/out")"
sed -i '1a #include "../sims/engine/sd_sim.h"' "$tmp/tree/src/sd_chain.c"
if "$py" "$here/scripts/layers.py" --root "$tmp/tree" --no-objects >/dev/null 2>"$tmp/out"; then
    fail "an upward include in src/sd_chain.c passed"
fi
grep -q 'src/sd_chain.c:2: includes sims/engine/sd_sim.h' "$tmp/out" ||
    fail "the upward include is not named: $(cat "$tmp/out")"

# 2. an injected upward call and a pair of files calling each other
t=$tmp/objs
mkdir -p "$t/src" "$t/sims/engine" "$t/sims/verifiers" "$t/build/src" "$t/build/sims/engine" \
         "$t/build/sims/verifiers"
printf 'int sd_high(void);\nint sd_low(void) { return sd_high(); }\n' >"$t/src/low.c"
printf 'int sd_high(void) { return 1; }\n' >"$t/sims/engine/high.c"
printf 'int sd_b(void);\nint sd_a(int n) { return n ? sd_b() : 0; }\n' >"$t/sims/verifiers/a.c"
printf 'int sd_a(int n);\nint sd_b(void) { return sd_a(0); }\n' >"$t/sims/verifiers/b.c"
for f in src/low sims/engine/high sims/verifiers/a sims/verifiers/b; do
    "$cc" -c "$t/$f.c" -o "$t/build/$f.o" || fail "cannot compile $f.c"
done
if "$py" "$here/scripts/layers.py" --root "$t" --build "$t/build" >/dev/null 2>"$tmp/out"; then
    fail "an upward call and a pair calling each other passed"
fi
grep -q 'src/low.c:2: references sd_high, defined in sims/engine/high.c' "$tmp/out" ||
    fail "the upward call is not named: $(cat "$tmp/out")"
grep -q 'sims/verifiers/a.c:2: and sims/verifiers/b.c call each other' "$tmp/out" ||
    fail "the pair is not named: $(cat "$tmp/out")"
echo "layers-selftest: an upward include, an upward call and a pair are each refused by name"
