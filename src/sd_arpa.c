/* sd_arpa.c — the ARPA reader (format and refusals in sd_arpa.h).
 *
 * One pass over the text, line by line: the header's counts size every
 * array before the sections are read (and are checked against the memory
 * limit first); words get ids through an open-addressing hash table
 * (FNV-1a); bigrams are then sorted by (w1, w2), where a duplicate shows
 * up as two equal neighbours and is reported with both line numbers. */
#include "sd_arpa.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t sd_arpa_bytes(size_t V, size_t n2, size_t n3)
{
    /* words: pointer + ~16 bytes text + 2 doubles + hash (2 slots of 4 bytes);
     * bigrams: ctx, tok, line (4 each) + logp, bo (8 each) + sort scratch (8) + tri_off (8);
     * trigrams: w1, w2, tok, line, perm (4 each) + logp (8) + sort scratch (12). */
    return V * (8 + 16 + 16 + 8 + 8) + n2 * (4 + 4 + 4 + 8 + 8 + 8 + 8) + n3 * (5 * 4 + 8 + 12) + 4096;
}

long sd_arpa_bigram(const sd_arpa *a, size_t w1, size_t w2)
{
    if (w1 >= a->V || !a->ctx_off)
        return -1;
    size_t lo = a->ctx_off[w1], hi = a->ctx_off[w1 + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->bi_tok[mid] < w2)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->ctx_off[w1 + 1] && a->bi_tok[lo] == w2 ? (long)lo : -1;
}

void sd_arpa_free(sd_arpa *a)
{
    if (!a)
        return;
    if (a->words)
        for (size_t i = 0; i < a->V; i++)
            free(a->words[i]);
    free(a->words);
    free(a->uni_logp);
    free(a->uni_bo);
    free(a->bi_ctx);
    free(a->bi_tok);
    free(a->bi_logp);
    free(a->ctx_off);
    free(a->bi_bo);
    free(a->tri_tok);
    free(a->tri_logp);
    free(a->tri_off);
    free(a);
}

/* --- the word table ------------------------------------------------------ */

typedef struct {
    uint32_t *slot; /* id + 1, 0 empty */
    size_t mask;
} S_hash;

static uint64_t S_fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The id of the word s[0..n), or -1; *at the slot where it is or would go. */
static long S_lookup(const S_hash *h, char *const *words, const char *s, size_t n, size_t *at)
{
    size_t i = (size_t)S_fnv(s, n) & h->mask;
    while (h->slot[i]) {
        const char *w = words[h->slot[i] - 1];
        if (strncmp(w, s, n) == 0 && w[n] == '\0') {
            *at = i;
            return (long)h->slot[i] - 1;
        }
        i = (i + 1) & h->mask;
    }
    *at = i;
    return -1;
}

long sd_arpa_find(const sd_arpa *a, const char *w)
{
    for (size_t i = 0; i < a->V; i++)
        if (strcmp(a->words[i], w) == 0)
            return (long)i;
    return -1;
}

/* --- lines and fields ---------------------------------------------------- */

typedef struct {
    const char *p, *end;
    size_t line;
    const char *src;
    sd_error *err;
} S_in;

/* The next line [*b, *e) without its newline (and a trailing \r); 0 at the end. */
static int S_line(S_in *in, const char **b, const char **e)
{
    if (in->p >= in->end)
        return 0;
    const char *s = in->p, *nl = memchr(s, '\n', (size_t)(in->end - s));
    const char *stop = nl ? nl : in->end;
    in->p = nl ? nl + 1 : in->end;
    in->line++;
    if (stop > s && stop[-1] == '\r')
        stop--;
    *b = s;
    *e = stop;
    return 1;
}

static int S_blank(const char *b, const char *e)
{
    for (; b < e; b++)
        if (*b != ' ' && *b != '\t')
            return 0;
    return 1;
}

/* Splits [b, e) at spaces and tabs into at most max fields; returns the count
 * (max + 1 when there are more). */
static size_t S_fields(const char *b, const char *e, const char **fb, size_t *fn, size_t max)
{
    size_t k = 0;
    while (b < e) {
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        if (b >= e)
            break;
        const char *s = b;
        while (b < e && *b != ' ' && *b != '\t')
            b++;
        if (k == max)
            return max + 1;
        fb[k] = s;
        fn[k] = (size_t)(b - s);
        k++;
    }
    return k;
}

/* "src:line: 'SHOWN'WHY", SHOWN the text b[0..n) cut at 60 characters. */
static int S_bad(S_in *in, const char *why, const char *b, size_t n)
{
    char shown[64];
    size_t m = n < sizeof shown - 4 ? n : sizeof shown - 4;
    memcpy(shown, b, m);
    strcpy(shown + m, n > m ? "..." : "");
    return sd_error_set(in->err, SD_EDATA, "%s:%zu: '%s'%s", in->src, in->line, shown, why);
}

/* A log10 value: finite, or <= -99 meaning -inf when prob; *out. */
static int S_number(S_in *in, const char *b, size_t n, int prob, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return S_bad(in, prob ? " is not a log10 probability; expected a number <= 0"
                              : " is not a log10 backoff weight; expected a finite number",
                     b, n);
    memcpy(buf, b, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    int ok = *end == '\0' && end != buf && (isfinite(v) || (prob && v < 0.0 && isinf(v)));
    if (ok && prob && !(v <= 0.0))
        ok = 0;
    if (!ok)
        return S_bad(in, prob ? " is not a log10 probability; expected a number <= 0"
                              : " is not a log10 backoff weight; expected a finite number",
                     b, n);
    *out = prob && v <= -99.0 ? -INFINITY : v;
    return SD_OK;
}

/* --- the parser ---------------------------------------------------------- */

static const sd_arpa *S_sort_model;

static int S_cmp_bigram(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const sd_arpa *a = S_sort_model;
    if (a->bi_ctx[i] != a->bi_ctx[j])
        return a->bi_ctx[i] < a->bi_ctx[j] ? -1 : 1;
    if (a->bi_tok[i] != a->bi_tok[j])
        return a->bi_tok[i] < a->bi_tok[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* trigrams while sorting: (bigram index, w3), then line */
static const uint32_t *S_sort_tbi, *S_sort_tw3;

static int S_cmp_trigram(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    if (S_sort_tbi[i] != S_sort_tbi[j])
        return S_sort_tbi[i] < S_sort_tbi[j] ? -1 : 1;
    if (S_sort_tw3[i] != S_sort_tw3[j])
        return S_sort_tw3[i] < S_sort_tw3[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

int sd_arpa_load_string(const char *text, const char *source, size_t max_bytes, sd_arpa **out,
                        sd_error *err)
{
    *out = NULL;
    S_in in = {text, text + strlen(text), 0, source, err};
    const char *b, *e, *fb[12];
    size_t fn[12];
    /* \data\ */
    int seen = 0;
    while (S_line(&in, &b, &e)) {
        const char *s = b;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        if ((size_t)(e - s) >= 6 && strncmp(s, "\\data\\", 6) == 0 && S_blank(s + 6, e)) {
            seen = 1;
            break;
        }
    }
    if (!seen)
        return sd_error_set(err, SD_EDATA, "%s:%zu: no \\data\\ line; expected an ARPA language model "
                                           "(\\data\\, ngram N=COUNT lines, \\N-grams: sections, \\end\\)",
                            source, in.line);
    sd_arpa *a = calloc(1, sizeof *a);
    if (!a)
        return sd_error_set(err, SD_ENOMEM, "out of memory");
    a->bos = a->eos = a->unk = -1;
    int rc = SD_OK;
    /* ngram N=COUNT lines up to the first section */
    const char *sec_b = NULL, *sec_e = NULL;
    while (!rc && S_line(&in, &b, &e)) {
        if (S_blank(b, e))
            continue;
        size_t k = S_fields(b, e, fb, fn, 3);
        if (k == 1 && fn[0] > 0 && fb[0][0] == '\\') {
            sec_b = b;
            sec_e = e;
            break;
        }
        unsigned long ord;
        unsigned long long cnt;
        char tail;
        /* "ngram N=COUNT", spaces allowed around '=' (IRSTLM writes "ngram  1=     32151") */
        char buf[64] = "";
        size_t bl = 0;
        if (k >= 2)
            for (const char *s = fb[1]; s < e && bl < sizeof buf - 1; s++)
                if (*s != ' ' && *s != '\t')
                    buf[bl++] = *s;
        buf[bl] = '\0';
        if (k >= 2 && k <= 3)
            k = 2;
        if (k != 2 || fn[0] != 5 || strncmp(fb[0], "ngram", 5) != 0 ||
            sscanf(buf, "%lu=%llu%c", &ord, &cnt, &tail) != 2 || buf[0] < '0' || buf[0] > '9' ||
            ord < 1 || ord > 9 || strchr(buf, '-') || strchr(buf, '+') || strchr(buf, ' ')) {
            rc = S_bad(&in, "; expected a count line 'ngram N=COUNT' (N in 1..9)", b, (size_t)(e - b));
            break;
        }
        if (ord != a->order + 1) {
            rc = S_bad(&in, ": the count lines must list orders 1, 2, ... in turn", b, (size_t)(e - b));
            break;
        }
        a->order = ord;
        a->counts[ord] = (size_t)cnt;
        if ((ord == 1 && cnt > SD_ARPA_MAX_V) || (ord == 2 && cnt > SD_ARPA_MAX_BIGRAMS) ||
            (ord == 3 && cnt > SD_ARPA_MAX_TRIGRAMS))
            rc = sd_error_set(err, SD_ETOOBIG, "%s:%zu: %llu %lu-grams; at most %zu are read", source, in.line,
                              cnt, ord, ord == 1 ? SD_ARPA_MAX_V : ord == 2 ? SD_ARPA_MAX_BIGRAMS : SD_ARPA_MAX_TRIGRAMS);
    }
    if (!rc && a->order == 0)
        rc = sd_error_set(err, SD_EDATA, "%s:%zu: \\data\\ lists no 'ngram N=COUNT' line", source, in.line);
    if (!rc && a->counts[1] == 0)
        rc = sd_error_set(err, SD_EDATA, "%s: ngram 1=0: a model needs at least one unigram", source);
    if (!rc && !sec_b)
        rc = sd_error_set(err, SD_EDATA, "%s:%zu: the file ends after \\data\\; expected the \\1-grams: section",
                          source, in.line);
    size_t V = a->counts[1], n2 = a->order >= 2 ? a->counts[2] : 0, n3 = a->order >= 3 ? a->counts[3] : 0;
    if (!rc && max_bytes && sd_arpa_bytes(V, n2, n3) > max_bytes)
        rc = sd_error_set(err, SD_ETOOBIG, "%s: %zu words, %zu bigrams and %zu trigrams take about %.3g MB; memory "
                          "budget %.3g MB", source, V, n2, n3, (double)sd_arpa_bytes(V, n2, n3) / 1e6,
                          (double)max_bytes / 1e6);
    S_hash h = {NULL, 0};
    uint32_t *bline = NULL, *perm = NULL, *tw1 = NULL, *tw2 = NULL, *tline = NULL;
    if (!rc) {
        size_t hs = 16;
        while (hs < 2 * V)
            hs *= 2;
        h.mask = hs - 1;
        h.slot = calloc(hs, sizeof *h.slot);
        a->words = calloc(V, sizeof *a->words);
        a->uni_logp = malloc(V * sizeof *a->uni_logp);
        a->uni_bo = calloc(V, sizeof *a->uni_bo);
        a->ctx_off = calloc(V + 1, sizeof *a->ctx_off);
        a->bi_ctx = malloc((n2 ? n2 : 1) * sizeof *a->bi_ctx);
        a->bi_tok = malloc((n2 ? n2 : 1) * sizeof *a->bi_tok);
        a->bi_logp = malloc((n2 ? n2 : 1) * sizeof *a->bi_logp);
        a->bi_bo = calloc(n2 ? n2 : 1, sizeof *a->bi_bo);
        bline = malloc((n2 ? n2 : 1) * sizeof *bline);
        if (n3) {
            a->tri_tok = malloc(n3 * sizeof *a->tri_tok);
            a->tri_logp = malloc(n3 * sizeof *a->tri_logp);
            a->tri_off = calloc(n2 + 1, sizeof *a->tri_off);
            tw1 = malloc(n3 * sizeof *tw1);
            tw2 = malloc(n3 * sizeof *tw2);
            tline = malloc(n3 * sizeof *tline);
        }
        if (!h.slot || !a->words || !a->uni_logp || !a->uni_bo || !a->ctx_off || !a->bi_ctx || !a->bi_tok ||
            !a->bi_logp || !a->bi_bo || !bline ||
            (n3 && (!a->tri_tok || !a->tri_logp || !a->tri_off || !tw1 || !tw2 || !tline)))
            rc = sd_error_set(err, SD_ENOMEM, "out of memory reading %s (%zu words, %zu bigrams)", source, V, n2);
    }
    /* the sections, in order 1..order */
    for (size_t ord = 1; !rc && ord <= a->order; ord++) {
        char want[32];
        snprintf(want, sizeof want, "\\%zu-grams:", ord);
        if (!sec_b) {
            rc = sd_error_set(err, SD_EDATA, "%s:%zu: the file ends; expected the %s section", source, in.line,
                              want);
            break;
        }
        {
            size_t k = S_fields(sec_b, sec_e, fb, fn, 1);
            if (k != 1 || fn[0] != strlen(want) || strncmp(fb[0], want, fn[0]) != 0) {
                char fmt[96];
                snprintf(fmt, sizeof fmt, "; expected the section header %s", want);
                rc = S_bad(&in, fmt, sec_b, (size_t)(sec_e - sec_b));
                break;
            }
        }
        sec_b = NULL;
        size_t n = 0, cnt = a->counts[ord];
        while (!rc && S_line(&in, &b, &e)) {
            if (S_blank(b, e))
                continue;
            if (*b == '\\') {
                sec_b = b;
                sec_e = e;
                break;
            }
            size_t k = S_fields(b, e, fb, fn, ord + 2);
            if (k != ord + 1 && k != ord + 2) {
                char fmt[128];
                snprintf(fmt, sizeof fmt, " has %s%zu field%s; expected %zu or %zu (log10 P, %zu word%s, optional "
                         "log10 backoff)", k > ord + 2 ? "more than " : "", k > ord + 2 ? ord + 2 : k,
                         k == 1 ? "" : "s", ord + 1, ord + 2, ord, ord > 1 ? "s" : "");
                rc = S_bad(&in, fmt, b, (size_t)(e - b));
                break;
            }
            if (n >= cnt) {
                char fmt[96];
                snprintf(fmt, sizeof fmt, ": more %zu-grams than the %zu declared in \\data\\", ord, cnt);
                rc = S_bad(&in, fmt, b, (size_t)(e - b));
                break;
            }
            double lp, bo = 0.0;
            if ((rc = S_number(&in, fb[0], fn[0], 1, &lp)))
                break;
            if (k == ord + 2 && (rc = S_number(&in, fb[ord + 1], fn[ord + 1], 0, &bo)))
                break;
            if (ord == 1) {
                size_t at;
                if (S_lookup(&h, a->words, fb[1], fn[1], &at) >= 0) {
                    rc = S_bad(&in, ": the word is listed twice among the unigrams", fb[1], fn[1]);
                    break;
                }
                if (!(a->words[n] = malloc(fn[1] + 1))) {
                    rc = sd_error_set(err, SD_ENOMEM, "out of memory");
                    break;
                }
                memcpy(a->words[n], fb[1], fn[1]);
                a->words[n][fn[1]] = '\0';
                h.slot[at] = (uint32_t)n + 1;
                a->uni_logp[n] = lp;
                a->uni_bo[n] = bo;
            } else if (ord == 2) {
                size_t at;
                long w1 = S_lookup(&h, a->words, fb[1], fn[1], &at);
                long w2 = w1 >= 0 ? S_lookup(&h, a->words, fb[2], fn[2], &at) : -1;
                if (w1 < 0 || w2 < 0) {
                    rc = S_bad(&in, " is not among the unigrams; every word of a bigram must be one",
                               w1 < 0 ? fb[1] : fb[2], w1 < 0 ? fn[1] : fn[2]);
                    break;
                }
                a->bi_ctx[n] = (uint32_t)w1;
                a->bi_tok[n] = (uint32_t)w2;
                a->bi_logp[n] = lp;
                a->bi_bo[n] = bo;
                bline[n] = (uint32_t)in.line;
            } else if (ord == 3) {
                size_t at;
                long w[3];
                int bad = -1;
                for (int j = 0; j < 3 && bad < 0; j++)
                    if ((w[j] = S_lookup(&h, a->words, fb[1 + j], fn[1 + j], &at)) < 0)
                        bad = j;
                if (bad >= 0) {
                    rc = S_bad(&in, " is not among the unigrams; every word of a trigram must be one", fb[1 + bad],
                               fn[1 + bad]);
                    break;
                }
                tw1[n] = (uint32_t)w[0];
                tw2[n] = (uint32_t)w[1];
                a->tri_tok[n] = (uint32_t)w[2];
                a->tri_logp[n] = lp;
                tline[n] = (uint32_t)in.line;
            }
            n++;
        }
        if (!rc && n != cnt)
            rc = sd_error_set(err, SD_EDATA, "%s:%zu: the %zu-grams section has %zu entries; \\data\\ declared %zu",
                              source, in.line, ord, n, cnt);
        if (!rc && ord == 1)
            a->V = V;
        if (!rc && ord == 2)
            a->n2 = n2;
    }
    /* \end\ */
    if (!rc) {
        if (!sec_b)
            while (S_line(&in, &b, &e) && S_blank(b, e))
                ;
        else {
            b = sec_b;
            e = sec_e;
        }
        size_t k = S_fields(b, e, fb, fn, 1);
        if (k != 1 || fn[0] != 5 || strncmp(fb[0], "\\end\\", 5) != 0)
            rc = k == 0 ? sd_error_set(err, SD_EDATA, "%s:%zu: the file ends without \\end\\", source, in.line)
                        : S_bad(&in, "; expected \\end\\ after the last section", b, (size_t)(e - b));
    }
    /* sort the bigrams, refuse duplicates, index contexts */
    if (!rc && n2) {
        if (!(perm = malloc(n2 * sizeof *perm)))
            rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        for (size_t i = 0; !rc && i < n2; i++)
            perm[i] = (uint32_t)i;
        if (!rc) {
            S_sort_model = a;
            qsort(perm, n2, sizeof *perm, S_cmp_bigram);
            for (size_t i = 1; i < n2; i++)
                if (a->bi_ctx[perm[i]] == a->bi_ctx[perm[i - 1]] && a->bi_tok[perm[i]] == a->bi_tok[perm[i - 1]]) {
                    rc = sd_error_set(err, SD_EDATA, "%s:%u: the bigram '%s %s' is listed twice (first at line %u)",
                                      source, bline[perm[i]], a->words[a->bi_ctx[perm[i]]],
                                      a->words[a->bi_tok[perm[i]]], bline[perm[i - 1]]);
                    break;
                }
        }
        if (!rc) { /* apply the permutation through bline as scratch */
            uint32_t *c2 = malloc(n2 * sizeof *c2);
            double *l2 = malloc(n2 * sizeof *l2), *o2 = malloc(n2 * sizeof *o2);
            if (!c2 || !l2 || !o2)
                rc = sd_error_set(err, SD_ENOMEM, "out of memory");
            for (size_t i = 0; !rc && i < n2; i++) {
                c2[i] = a->bi_ctx[perm[i]];
                bline[i] = a->bi_tok[perm[i]];
                l2[i] = a->bi_logp[perm[i]];
                o2[i] = a->bi_bo[perm[i]];
            }
            if (!rc) {
                memcpy(a->bi_ctx, c2, n2 * sizeof *c2);
                memcpy(a->bi_tok, bline, n2 * sizeof *bline);
                memcpy(a->bi_logp, l2, n2 * sizeof *l2);
                memcpy(a->bi_bo, o2, n2 * sizeof *o2);
            }
            free(c2);
            free(l2);
            free(o2);
        }
    }
    if (!rc) {
        for (size_t i = 0; i < a->n2; i++)
            a->ctx_off[a->bi_ctx[i] + 1]++;
        for (size_t i = 0; i < V; i++)
            a->ctx_off[i + 1] += a->ctx_off[i];
        for (size_t i = 0; i < V; i++) {
            if (strcmp(a->words[i], "<s>") == 0)
                a->bos = (long)i;
            else if (strcmp(a->words[i], "</s>") == 0)
                a->eos = (long)i;
            else if (strcmp(a->words[i], "<unk>") == 0)
                a->unk = (long)i;
        }
    }
    /* trigrams: each to its prefix bigram, sorted by (bigram, w3), duplicates refused */
    if (!rc && n3) {
        uint32_t *tperm = malloc(n3 * sizeof *tperm);
        if (!tperm)
            rc = sd_error_set(err, SD_ENOMEM, "out of memory");
        for (size_t i = 0; !rc && i < n3; i++) {
            long bi = sd_arpa_bigram(a, tw1[i], tw2[i]);
            if (bi < 0)
                rc = sd_error_set(err, SD_EDATA, "%s:%u: the trigram '%s %s %s' has no bigram '%s %s'; expected every "
                                  "trigram's prefix among the bigrams (it holds the backoff weight)", source,
                                  tline[i], a->words[tw1[i]], a->words[tw2[i]], a->words[a->tri_tok[i]],
                                  a->words[tw1[i]], a->words[tw2[i]]);
            tw1[i] = (uint32_t)bi; /* tw1 now holds the bigram index */
            tperm[i] = (uint32_t)i;
        }
        if (!rc) {
            S_sort_tbi = tw1;
            S_sort_tw3 = a->tri_tok;
            qsort(tperm, n3, sizeof *tperm, S_cmp_trigram);
            for (size_t i = 1; i < n3 && !rc; i++) {
                uint32_t x = tperm[i], y = tperm[i - 1];
                if (tw1[x] == tw1[y] && a->tri_tok[x] == a->tri_tok[y])
                    rc = sd_error_set(err, SD_EDATA, "%s:%u: the trigram '%s %s %s' is listed twice (first at line "
                                      "%u)", source, tline[x], a->words[a->bi_ctx[tw1[x]]], a->words[a->bi_tok[tw1[x]]],
                                      a->words[a->tri_tok[x]], tline[y]);
            }
        }
        if (!rc) { /* apply the permutation (tw2 and tline as scratch) */
            double *l3 = malloc(n3 * sizeof *l3);
            if (!l3)
                rc = sd_error_set(err, SD_ENOMEM, "out of memory");
            for (size_t i = 0; !rc && i < n3; i++) {
                tw2[i] = a->tri_tok[tperm[i]];
                tline[i] = tw1[tperm[i]];
                l3[i] = a->tri_logp[tperm[i]];
            }
            if (!rc) {
                memcpy(a->tri_tok, tw2, n3 * sizeof *tw2);
                memcpy(a->tri_logp, l3, n3 * sizeof *l3);
                for (size_t i = 0; i < n3; i++)
                    a->tri_off[tline[i] + 1]++;
                for (size_t i = 0; i < n2; i++)
                    a->tri_off[i + 1] += a->tri_off[i];
                a->n3 = n3;
            }
            free(l3);
        }
        free(tperm);
    }
    free(h.slot);
    free(bline);
    free(perm);
    free(tw1);
    free(tw2);
    free(tline);
    if (rc) {
        sd_arpa_free(a);
        return rc;
    }
    *out = a;
    return SD_OK;
}

int sd_arpa_load(const char *path, size_t max_bytes, sd_arpa **out, sd_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sd_error_set(err, SD_EIO, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? SD_OK : sd_error_set(err, SD_ENOMEM, "out of memory");
    while (!rc) {
        if (len + 1 >= cap) {
            if (max_bytes && cap > max_bytes) {
                rc = sd_error_set(err, SD_ETOOBIG, "%s: the file exceeds the memory budget of %.3g MB", path,
                                  (double)max_bytes / 1e6);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = sd_error_set(err, SD_ENOMEM, "out of memory reading %s", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = sd_error_set(err, SD_EIO, "cannot read '%s': %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!rc && memchr(buf, '\0', len))
        rc = sd_error_set(err, SD_EDATA, "%s: a NUL byte; expected an ARPA text file", path);
    if (!rc) {
        buf[len] = '\0';
        rc = sd_arpa_load_string(buf, path, max_bytes, out, err);
    }
    free(buf);
    return rc;
}
