/* sd_ngram.h — next-token rows of an ARPA backoff model (src/sd_arpa.h) of
 * order 1, 2 or 3 at a history, as dense rows over a vocabulary: the rows
 * that logged traces of a language model carry (src/sd_trace_write.h).
 *
 * Katz backoff (Katz 1987, "Estimation of probabilities from sparse data
 * for the language model component of a speech recognizer"), as ARPA
 * files state it (Stolcke 2002):
 *     P1(z)     = 10^logp(z)
 *     P2(z|y)   = 10^logp(y z)             if the bigram "y z" is listed,
 *               = 10^bo(y) P1(z)           else;
 *     P3(z|x y) = 10^logp(x y z)           if the trigram is listed,
 *               = 10^bo(x y) P2(z|y)       else (bo(x y) = 1 when "x y"
 *                                          is not a bigram).
 * A history shorter than order - 1 uses the order it has (the first
 * position after <s> is the bigram row at <s>), and a history word the
 * model does not know (another file's vocabulary) shortens the history to
 * the words after it.  As in src/sd_backoff.h: <s> gets probability 0,
 * each row is renormalised (its raw sum's distance from 1 is reported),
 * and a context whose listed successors leave less than
 * SD_BACKOFF_REST_EPS of the lower order's mass unlisted backs off to
 * nothing (CMU Sphinx writes backoff weights of 10^99.999 there).  At
 * order 2 with the same file these are exactly sd_backoff's rows.
 *
 * A row costs O(V) (the lower orders' rows are written in full, then the
 * listed n-grams overwrite theirs); nothing is V x V. */
#ifndef SD_NGRAM_H
#define SD_NGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "sd_arpa.h"
#include "sd_error.h"

typedef struct sd_ngram {
    const sd_arpa *a;  /* borrowed: the model's file */
    size_t order;      /* 1..3 */
    size_t V;          /* the output vocabulary (the target's words) */
    long *map;         /* [V]: output id -> a's id (-1: a lacks the word); NULL: the same ids */
    double *uni;       /* [a->V]: 10^logp of the unigrams, 0 for <s> */
    double usum;       /* Σ uni */
    double *w;         /* [a->V]: scratch */
    /* rows kept by history (sd_ngram_cache; 0 slots: none): slot j holds
     * the row of the history ckey[3j..3j+2] = (length, h0, h1) */
    size_t cslots;
    double *crows, *cdev; /* [cslots][V], [cslots] */
    long *ckey;           /* [3 cslots]; length -1: empty */
} sd_ngram;

/* The rows of model a at order 1..3 (at most a->order) over the words of
 * `vocab` (NULL: a's own; else matched by spelling).  SD_EUSAGE for an
 * order out of range, SD_EDATA when the unigram has no mass on the
 * vocabulary, SD_ENOMEM.  Free with sd_ngram_free(). */
int sd_ngram_open(const sd_arpa *a, size_t order, const sd_arpa *vocab, sd_ngram **out, sd_error *err);
void sd_ngram_free(sd_ngram *g);

/* Keeps the rows of up to `slots` histories (direct-mapped by the
 * history's usable words), so that a history met again costs a copy of its
 * row instead of O(V) arithmetic: the same bits (a row is a function of
 * the usable history).  Takes slots·(V + 4)·8 bytes.  Not for concurrent
 * callers of sd_ngram_row on the same g.  SD_ETOOBIG when that size
 * overflows size_t; SD_ENOMEM. */
int sd_ngram_cache(sd_ngram *g, size_t slots, sd_error *err);

/* The row after hist[0..nh) (output ids, the most recent last) into
 * row[V]; *dev (may be NULL) gets |raw sum - 1| of the row before
 * renormalising.  SD_EDATA naming the context when the row has no mass. */
int sd_ngram_row(const sd_ngram *g, const int64_t *hist, size_t nh, double *row, double *dev, sd_error *err);

#endif
