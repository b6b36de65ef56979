#!/bin/sh
# install-deps.sh — installs the Debian packages simdec needs, only those
# missing.  Idempotent: a second run installs nothing and does not touch the
# network.  Used by `make deps`, which `make demo` and `make check` run first.
#
#   scripts/install-deps.sh            build, test and figure dependencies
#                                      (MPI, clang's fuzzing runtime and
#                                      valgrind are part of the test command;
#                                      numpy and pytest, of the Python tests
#                                      and the samples example of docs/commands.md)
#   scripts/install-deps.sh --extra    the same (numpy, once the only optional
#                                      tool, is now installed always)
set -eu

pkgs="gcc make pkg-config libgsl-dev libjansson-dev libglpk-dev
libcriterion-dev librandom123-dev gnuplot-nox fonts-dejavu-core
libopenmpi-dev openmpi-bin clang-14 libclang-rt-14-dev libomp-14-dev valgrind
python3-numpy python3-pytest
irstlm fortunes pocketsphinx-en-us sphinxbase-utils coinor-libclp-dev"

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: missing Debian packages:$missing" >&2
    echo "install-deps: run as root: apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086 # the package list is meant to split
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
