/* suggest.c — nearest known word by edit distance (suggest.h). */
#include "suggest.h"

#include <stdio.h>
#include <string.h>

#define S_MAXLEN 63

size_t cli_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    n = n > S_MAXLEN ? S_MAXLEN : n;
    m = m > S_MAXLEN ? S_MAXLEN : m;
    /* d[i][j]: distance between a[0..i) and b[0..j) (Damerau's
     * transposition restricted to adjacent, untouched letters). */
    size_t d[S_MAXLEN + 1][S_MAXLEN + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

void cli_suggest_init(cli_suggest *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->dist = (size_t)-1;
}

void cli_suggest_add(cli_suggest *s, const char *candidate)
{
    if (!candidate || !s->word || strcmp(candidate, s->word) == 0)
        return;
    size_t d = cli_edit_distance(s->word, candidate);
    if (d < s->dist) {
        s->dist = d;
        s->best = candidate;
    }
}

const char *cli_suggest_result(const cli_suggest *s)
{
    return s->best && s->dist <= 2 && s->dist < strlen(s->word) ? s->best : NULL;
}

char *cli_suggest_text(const cli_suggest *s, const char *prefix, char *buf, size_t len)
{
    const char *r = cli_suggest_result(s);
    if (r)
        snprintf(buf, len, "; did you mean '%s%s'?", prefix ? prefix : "", r);
    else if (len)
        buf[0] = '\0';
    return buf;
}
