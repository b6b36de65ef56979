/* suggest.h — "did you mean" for the command line: the known word nearest
 * to a mistyped option, verifier, command or subcommand, by edit distance
 * (optimal string alignment: insertions, deletions, substitutions and
 * transpositions of adjacent letters each cost 1). */
#ifndef CLI_SUGGEST_H
#define CLI_SUGGEST_H

#include <stddef.h>

/* The edit distance between a and b (a, b shorter than 64 characters; longer
 * words are compared on their first 63). */
size_t cli_edit_distance(const char *a, const char *b);

/* Feed candidates one by one; the result is the nearest within distance 2
 * (and less than the word's length), the first on ties, or NULL. */
typedef struct cli_suggest {
    const char *word;
    const char *best;
    size_t dist;
} cli_suggest;

void cli_suggest_init(cli_suggest *s, const char *word);
void cli_suggest_add(cli_suggest *s, const char *candidate);
const char *cli_suggest_result(const cli_suggest *s);

/* "; did you mean 'block'?" (with prefix, e.g. "--") into buf, or "" when
 * there is no near candidate.  Returns buf. */
char *cli_suggest_text(const cli_suggest *s, const char *prefix, char *buf, size_t len);

#endif
