/* test_backoff_lookup.c — the batched lookups q_{a_j}(x_j) of
 * sd_backoff_q_many (four searches in lockstep among the seen bigrams of
 * each context) against the single lookup sd_backoff_q, bit for bit.
 *
 * A generated ARPA bigram over 300 words whose contexts have 0, 1, 2, 3,
 * 17, 64 and up to 290 seen bigrams (so the lockstep's lanes finish after
 * different numbers of levels, and some rows are empty), queried with
 * every batch size 1..9 (whole groups of four and partial ones), at every
 * seen bigram, its neighbours in the vocabulary and random pairs.  The two
 * must agree exactly: the same stored number (e_a(x) or c_a u(x)), found
 * by a different search.
 *
 * The per-context lines are copies kept for speed: both lookups are
 * checked against the plain
 * sorted rows (off, tok, qe, c, u: a search written here), and every
 * context line against the arrays it copies, on the generated model and
 * on the fortunes bigram; so are the draws that read the lines. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/sd_arpa.h"
#include "../src/sd_backoff.h"
#include "../src/sd_rngbuf.h"

enum { S_V = 300 };

/* Context i (word w<i>) sees the words w<(i + 7 k) mod V> for k < len(i). */
static size_t S_len(size_t i)
{
    static const size_t lens[] = {0, 1, 2, 3, 17, 64, 0, 5, 290, 1, 8, 130};
    return lens[i % (sizeof lens / sizeof lens[0])];
}

static char *S_arpa_text(void)
{
    size_t nbi = 0;
    for (size_t i = 2; i < S_V; i++)
        nbi += S_len(i);
    char *t = malloc(64 * (S_V + nbi) + 256), *o = t;
    cr_assert_not_null(t);
    o += sprintf(o, "\n\\data\\\nngram 1=%d\nngram 2=%zu\n\n\\1-grams:\n", S_V, nbi);
    o += sprintf(o, "-1.5\t</s>\t-0.1\n-99\t<s>\t-0.2\n");
    for (size_t i = 2; i < S_V; i++)
        o += sprintf(o, "%.4f\tw%zu\t%.4f\n", -2.0 - 0.004 * (double)i, i, -0.3 - 0.001 * (double)(i % 13));
    o += sprintf(o, "\n\\2-grams:\n");
    for (size_t i = 2; i < S_V; i++) {
        /* the seen words of context i, each once: i + 7k mod V, skipping <s> and </s> */
        size_t n = 0;
        for (size_t k = 0; n < S_len(i); k++) {
            size_t x = (i + 7 * k) % S_V;
            if (x < 2)
                continue;
            o += sprintf(o, "%.4f w%zu w%zu\n", -1.0 - 0.01 * (double)((i + k) % 50), i, x);
            n++;
        }
    }
    sprintf(o, "\n\\end\\\n");
    return t;
}

/* The bigram of the ARPA file (path, or NULL: the generated text above)
 * as a backoff model drafting with its unigram, its file in *a. */
static sd_backoff *S_model(const char *path, sd_arpa **a)
{
    sd_backoff *m = NULL;
    sd_error err;
    *a = NULL;
    if (path) {
        cr_assert_eq(sd_arpa_load(path, 0, a, &err), SD_OK, "%s", err.msg);
    } else {
        char *text = S_arpa_text();
        cr_assert_eq(sd_arpa_load_string(text, "gen.arpa", 0, a, &err), SD_OK, "%s", err.msg);
        free(text);
    }
    cr_assert_eq(sd_backoff_from_arpa(*a, 2, *a, 8, 0, &m, &err), SD_OK, "%s", err.msg);
    return m;
}

Test(backoff_lookup, batched_lookups_equal_single_lookups_bit_for_bit)
{
    sd_arpa *a;
    sd_backoff *m = S_model(NULL, &a);
    cr_assert_eq(m->V, (size_t)S_V);
    /* the queries: every seen bigram, the next word after it, and random pairs */
    size_t nq = 0, cap = 3 * m->nnz + 4000;
    size_t *qa = malloc(cap * sizeof *qa), *qx = malloc(cap * sizeof *qx);
    cr_assert(qa && qx);
    for (size_t c = 0; c < m->V; c++)
        for (size_t i = m->off[c]; i < m->off[c + 1]; i++) {
            qa[nq] = c, qx[nq++] = m->tok[i];
            qa[nq] = c, qx[nq++] = (m->tok[i] + 1) % m->V;
            qa[nq] = c, qx[nq++] = m->tok[i] ? m->tok[i] - 1 : m->V - 1;
        }
    uint64_t r = 88172645463325252u;
    for (int k = 0; k < 4000; k++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        qa[nq] = (size_t)(r % m->V), qx[nq++] = (size_t)((r >> 20) % m->V);
    }
    size_t seen = 0, checked = 0;
    double *q = malloc(9 * sizeof *q);
    for (size_t n = 1; n <= 9; n++)
        for (size_t j0 = 0; j0 + n <= nq; j0 += n) {
            sd_backoff_q_many(m, qa + j0, qx + j0, n, q);
            for (size_t j = 0; j < n; j++) {
                double one = sd_backoff_q(m, qa[j0 + j], qx[j0 + j]);
                cr_assert(q[j] == one, "n = %zu: q_%zu(%zu) batched %.17g, single %.17g", n, qa[j0 + j],
                          qx[j0 + j], q[j], one);
                checked++;
            }
        }
    for (size_t c = 0; c < m->V; c++)
        seen += m->off[c + 1] > m->off[c] + 200; /* the long rows were built (the deep searches ran) */
    cr_assert_gt(seen, 0);
    cr_log_info("%zu lookups compared (%zu seen bigrams)", checked, m->nnz);
    free(q);
    free(qa);
    free(qx);
    sd_backoff_free(m);
    sd_arpa_free(a);
}

/* S_model of the fortunes bigram (`make lm`), or NULL when it is absent. */
static sd_backoff *S_fortunes(sd_arpa **a)
{
    const char *lm = "build/lm/fortunes-bigram.arpa";
    return access(lm, R_OK) == 0 ? S_model(lm, a) : NULL;
}

/* q_a(x) from the sorted rows alone (a linear scan, no search). */
static double S_plain_q(const sd_backoff *m, size_t a, size_t x)
{
    for (size_t i = m->off[a]; i < m->off[a + 1]; i++)
        if (m->tok[i] == x)
            return m->qe[i];
    return m->c[a] * m->u[x];
}

/* The context lines of m against the arrays, and the lookups (single and
 * batched) against a linear scan of the rows; nrand random pairs besides
 * every seen bigram and its neighbours.  Returns the lookups compared. */
static size_t S_check_copies_isa(const sd_backoff *m, size_t nrand)
{
    cr_assert_not_null(m->hctx, "the context lines were not built");
    cr_assert_not_null(m->gde, "the guide was not built");
    size_t checked = 0;
    for (size_t c = 0; c < m->V; c++) {
        const sd_backoff_ctx *h = m->hctx + c;
        cr_assert(h->lo == m->off[c] && h->hi == m->off[c + 1] && h->c == m->c[c] && h->m1 == m->m1[2 * c] &&
                      h->m1d == m->m1[2 * c + 1] && h->eres == m->eres[c] && h->emass == m->emass[c] &&
                      h->restm == m->restm[c],
                  "context line %zu differs from the arrays", c);
    }
    size_t qa[4], qx[4];
    double q4[4];
    uint64_t r = 0x9E3779B97F4A7C15u;
    for (size_t c = 0, k = 0; c < m->V; c++)
        for (size_t i = m->off[c]; i < m->off[c + 1] + 1; i++) { /* each seen token, and one past the row */
            size_t x = i < m->off[c + 1] ? m->tok[i] : (m->off[c + 1] > m->off[c] ? m->tok[i - 1] + 1 : c) % m->V;
            for (size_t d = 0; d < 2; d++, x = (x + 1) % m->V) { /* the token and its neighbour */
                double want = S_plain_q(m, c, x);
                cr_assert(sd_backoff_q(m, c, x) == want, "q_%zu(%zu) %.17g, rows %.17g", c, x,
                          sd_backoff_q(m, c, x), want);
                qa[k] = c, qx[k] = x, k++;
                if (k == 4) {
                    sd_backoff_q_many(m, qa, qx, 4, q4);
                    for (size_t j = 0; j < 4; j++)
                        cr_assert(q4[j] == S_plain_q(m, qa[j], qx[j]), "batched q_%zu(%zu)", qa[j], qx[j]);
                    k = 0;
                }
                checked++;
            }
        }
    for (size_t k = 0; k < nrand; k++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t c = (size_t)(r % m->V), x = (size_t)((r >> 24) % m->V);
        cr_assert(sd_backoff_q(m, c, x) == S_plain_q(m, c, x), "q_%zu(%zu)", c, x);
        checked++;
    }
    return checked;
}

/* The same with the batched lookups' guide searched by each instruction
 * set (scalar, AVX2, and whatever the processor has), its deepest guide
 * (levels above the rows) in *levels. */
static size_t S_check_copies(const sd_backoff *m, size_t nrand, unsigned *levels)
{
    size_t checked = 0;
    *levels = 0;
    for (size_t a = 0; a < m->V; a++) {
        const sd_backoff_ctx *h = m->hctx + a;
        size_t n = h->hi - h->lo, L = 0;
        for (size_t k = n; k > 16; k = (k + 15) / 16)
            L++;
        cr_assert_eq(h->glev, L, "context %zu: %zu keys, %u guide levels, want %zu", a, n, h->glev, L);
        *levels = h->glev > *levels ? h->glev : *levels;
    }
    for (int isa = 0; isa <= 2; isa++) {
        sd_rngbuf_cap_isa(isa);
        checked += S_check_copies_isa(m, nrand);
    }
    sd_rngbuf_cap_isa(-1);
    return checked;
}

/* The end draws of block verification through the context lines
 * (sd_backoff_draw_q_line, sd_backoff_draw_residual_line) against the same
 * draws through the arrays: the same token (but at scale 1, drawn by
 * another method) and the same numbers used (the stream left in the same
 * state), at every context and several scales. */
static size_t S_check_line_draws(const sd_backoff *m, size_t reps)
{
    static const double scales[] = {1.0, 0.9, 0.5, 0.2, 0.03};
    size_t checked = 0;
    for (size_t c = 0; c < m->V; c++)
        for (size_t r = 0; r < reps; r++) {
            sd_rngbuf g1, g2;
            sd_rngbuf_init(&g1, 11, c * reps + r);
            g2 = g1;
            size_t y1 = sd_backoff_draw_q(m, c, &g1), y2 = sd_backoff_draw_q_line(m, c, &g2);
            cr_assert_eq(y1, y2, "q draw, context %zu, rep %zu", c, r);
            cr_assert(memcmp(&g1, &g2, sizeof g1) == 0, "q draw's stream, context %zu", c);
            for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
                double mass = sd_backoff_mass(m, c, scales[k]);
                if (!(mass > 0.0))
                    continue;
                y1 = sd_backoff_draw_residual(m, c, scales[k], mass, &g1);
                y2 = sd_backoff_draw_residual_line(m, c, scales[k], mass, &g2);
                /* at s = 1 the line draws by the row's Walker table (its law: test below) */
                cr_assert(y1 == y2 || scales[k] == 1.0, "residual at s = %g, context %zu, rep %zu", scales[k], c, r);
                cr_assert(memcmp(&g1, &g2, sizeof g1) == 0, "residual's stream, context %zu", c);
                checked++;
            }
        }
    return checked;
}

Test(backoff_lookup, draws_through_the_context_lines_equal_the_draws_through_the_arrays, .timeout = 120)
{
    sd_arpa *a;
    sd_backoff *m = S_model(NULL, &a);
    cr_assert_not_null(m->hctx);
    size_t n = S_check_line_draws(m, 20);
    cr_assert_gt(n, 1000);
    cr_log_info("%zu residual draws compared", n);
    sd_backoff_free(m);
    sd_arpa_free(a);
    if (!(m = S_fortunes(&a)))
        return;
    cr_log_info("%zu residual draws compared on the fortunes bigram", S_check_line_draws(m, 1));
    sd_backoff_free(m);
    sd_arpa_free(a);
}

Test(backoff_lookup, context_lines_and_lookups_equal_the_rows_on_a_generated_model)
{
    sd_arpa *a;
    sd_backoff *m = S_model(NULL, &a);
    unsigned levels;
    cr_log_info("%zu lookups compared", S_check_copies(m, 20000, &levels));
    cr_assert_eq(levels, 2, "rows of up to 290 seen bigrams: two guide levels, not %u", levels);
    sd_backoff_free(m);
    sd_arpa_free(a);
}

Test(backoff_lookup, context_lines_and_lookups_equal_the_rows_on_the_fortunes_bigram, .timeout = 120)
{
    sd_arpa *a;
    sd_backoff *m = S_fortunes(&a);
    if (!m)
        cr_skip_test("build/lm/fortunes-bigram.arpa absent (make lm)");
    unsigned levels;
    cr_log_info("%zu lookups compared", S_check_copies(m, 200000, &levels));
    cr_assert_geq(levels, 3, "the row after <s> (9735 seen bigrams) has three guide levels, not %u", levels);
    sd_backoff_free(m);
    sd_arpa_free(a);
}

/* The rows' Walker tables of the scale-1 seen residual (rrw): the law they
 * imply over tokens, Σ_k [keep_k = x] t_k + [alias_k = x] (1 - t_k) over
 * the n columns divided by n, is max(0, e_a(x) - p(x)) normalised, to
 * rounding; every token named is one of the row's seen tokens. */
static void S_check_row_alias(const sd_backoff *m)
{
    cr_assert_not_null(m->rrw, "the rows' Walker tables were not built");
    double *law = calloc(m->V, sizeof *law), worst = 0.0;
    cr_assert_not_null(law);
    size_t rows = 0;
    for (size_t a = 0; a < m->V; a++) {
        size_t lo = m->off[a], n = m->off[a + 1] - lo;
        double tot = 0.0;
        for (size_t i = lo; i < lo + n; i++)
            tot += fmax(0.0, m->qe[i] - m->p[m->tok[i]]);
        if (!(tot > 0.0))
            continue;
        rows++;
        for (size_t k = 0; k < n; k++) {
            const sd_backoff_walker *e = m->rrw + lo + k;
            cr_assert(e->keep == m->tok[lo + k], "context %zu: column %zu keeps another token", a, k);
            law[e->keep] += e->thr / (double)n;
            law[e->alias] += (1.0 - e->thr) / (double)n;
        }
        double named = 0.0;
        for (size_t k = 0; k < n; k++) {
            double want = fmax(0.0, m->qe[lo + k] - m->p[m->tok[lo + k]]) / tot;
            worst = fmax(worst, fabs(law[m->tok[lo + k]] - want));
            cr_assert(want > 0.0 || law[m->tok[lo + k]] == 0.0, "context %zu: token %u of no residual drawn", a,
                      m->tok[lo + k]);
            named += law[m->tok[lo + k]];
            law[m->tok[lo + k]] = 0.0;
        }
        cr_assert(fabs(named - 1.0) < 1e-12, "context %zu: the table names tokens outside the row", a);
    }
    free(law);
    cr_log_info("%zu rows: largest |implied - residual| %.3g", rows, worst);
    cr_assert_gt(rows, 0);
    cr_assert_lt(worst, 1e-12);
}

Test(backoff_lookup, row_walker_tables_give_the_scale_one_residual, .timeout = 60)
{
    sd_arpa *a;
    sd_backoff *m = S_model(NULL, &a);
    S_check_row_alias(m);
    sd_backoff_free(m);
    sd_arpa_free(a);
    if (!(m = S_fortunes(&a)))
        return;
    S_check_row_alias(m);
    sd_backoff_free(m);
    sd_arpa_free(a);
}
