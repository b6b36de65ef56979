#!/bin/sh
# make-lm.sh [OUTDIR] — builds the real language models of the examples
# (docs/own-model.md) from Debian packages (scripts/install-deps.sh):
#   OUTDIR/fortunes-bigram.arpa  a Witten-Bell word bigram (IRSTLM's tlm) of
#       the English text of the `fortunes` package: the fortune files,
#       lowercased, everything but letters, digits and ' made a space, one
#       sentence per line between <s> and </s> (about 32 000 words, 201 000
#       bigrams; about 1 s)
#   OUTDIR/fortunes-quarter-bigram.arpa  the same from the text's first
#       quarter of lines (a bigram drafter for it: about 15 000 words,
#       69 000 bigrams)
#   OUTDIR/en-us-phone.arpa      CMU's English phone trigram model of
#       pocketsphinx-en-us (43 phones) written as ARPA by sphinx_lm_convert
# Idempotent: existing files are kept.  Default OUTDIR: build/lm.
set -eu
out=${1:-build/lm}
mkdir -p "$out"
tlm=/usr/lib/irstlm/bin/tlm
addse=/usr/lib/irstlm/bin/add-start-end.sh
if [ ! -s "$out/fortunes-bigram.arpa" ] || [ ! -s "$out/fortunes-quarter-bigram.arpa" ]; then
    [ -x "$tlm" ] || { echo "make-lm: irstlm is not installed (scripts/install-deps.sh)" >&2; exit 1; }
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for f in $(dpkg -L fortunes | grep '^/usr/share/games/fortunes/[^./]*$'); do
        [ -f "$f" ] && cat "$f"
    done | grep -v '^%$' | tr 'A-Z' 'a-z' | sed "s/[^a-z0-9' ]/ /g" >"$tmp/text"
    if [ ! -s "$out/fortunes-bigram.arpa" ]; then
        "$addse" <"$tmp/text" >"$tmp/text.se"
        "$tlm" -tr="$tmp/text.se" -n=2 -lm=wb -o="$tmp/lm.arpa" >/dev/null 2>&1
        mv "$tmp/lm.arpa" "$out/fortunes-bigram.arpa"
    fi
    if [ ! -s "$out/fortunes-quarter-bigram.arpa" ]; then
        head -n $(($(wc -l <"$tmp/text") / 4)) "$tmp/text" | "$addse" >"$tmp/quarter.se"
        "$tlm" -tr="$tmp/quarter.se" -n=2 -lm=wb -o="$tmp/quarter.arpa" >/dev/null 2>&1
        mv "$tmp/quarter.arpa" "$out/fortunes-quarter-bigram.arpa"
    fi
fi
if [ ! -s "$out/en-us-phone.arpa" ]; then
    bin=/usr/share/pocketsphinx/model/en-us/en-us-phone.lm.bin
    command -v sphinx_lm_convert >/dev/null 2>&1 && [ -f "$bin" ] ||
        { echo "make-lm: sphinxbase-utils or pocketsphinx-en-us is not installed (scripts/install-deps.sh)" >&2; exit 1; }
    sphinx_lm_convert -i "$bin" -o "$out/en-us-phone.arpa.tmp" -ofmt arpa >/dev/null 2>&1
    mv "$out/en-us-phone.arpa.tmp" "$out/en-us-phone.arpa"
fi
ls -l "$out"/*.arpa
