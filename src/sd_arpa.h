/* sd_arpa.h — backoff n-gram language models in the ARPA text format.
 *
 * The format (Stolcke 2002, "SRILM — an extensible language modeling
 * toolkit"; written by SRILM, KenLM and IRSTLM alike):
 *
 *     \data\
 *     ngram 1=N1
 *     ngram 2=N2
 *
 *     \1-grams:
 *     log10 P(w)  w  [log10 backoff(w)]
 *     ...
 *     \2-grams:
 *     log10 P(w2|w1)  w1 w2  [log10 backoff(w1 w2)]
 *     ...
 *     \end\
 *
 * Anything before "\data\" is ignored (toolkits write a comment header).
 * Fields are separated by spaces or tabs; a log-probability of -99 or
 * below (SRILM's and IRSTLM's "minus infinity", written for <s>) means
 * probability 0.  Unigrams, bigrams (with their backoff weights) and
 * trigrams are kept; sections of order > 3 are read for their syntax and
 * counts and then dropped.  The sparse-row chains are built from the
 * unigram and the bigram (src/sd_backoff.h); rows of any kept order, the
 * trigram too, are computed at a history by src/sd_ngram.h.
 *
 * Everything malformed is refused with SD_EDATA and "FILE:LINE: what was
 * found; what was expected": a missing \data\ or \end\, a count line that
 * is not "ngram N=COUNT", a section whose count differs from its header, a
 * line with the wrong number of fields, a log-probability that is not a
 * finite number <= 0 (or a backoff that is not finite), a bigram with a
 * word that is not a unigram, a duplicate unigram, bigram or trigram, a
 * trigram "w1 w2 w3" whose prefix "w1 w2" is not a bigram (toolkits list
 * every n-gram's prefix: its backoff weight lives there). */
#ifndef SD_ARPA_H
#define SD_ARPA_H

#include <stddef.h>
#include <stdint.h>

#include "sd_error.h"

typedef struct sd_arpa {
    size_t order;        /* highest order declared in \data\ (>= 1) */
    size_t V;            /* unigrams */
    char **words;        /* [V]: the vocabulary, in file order (token id = index) */
    double *uni_logp;    /* [V]: log10 P(w) (-inf for <= -99) */
    double *uni_bo;      /* [V]: log10 backoff(w) (0 where absent) */
    size_t n2;           /* bigrams */
    uint32_t *bi_ctx;    /* [n2]: w1, sorted by (w1, w2) */
    uint32_t *bi_tok;    /* [n2]: w2 */
    double *bi_logp;     /* [n2]: log10 P(w2|w1) (-inf for <= -99) */
    size_t *ctx_off;     /* [V+1]: the bigrams of context a are ctx_off[a]..ctx_off[a+1]-1 */
    double *bi_bo;       /* [n2]: log10 backoff(w1 w2) (0 where absent) */
    size_t n3;           /* trigrams (0 unless order >= 3) */
    uint32_t *tri_tok;   /* [n3]: w3, sorted by (bigram w1 w2, w3) */
    double *tri_logp;    /* [n3]: log10 P(w3|w1 w2) (-inf for <= -99) */
    size_t *tri_off;     /* [n2+1] or NULL: the trigrams after bigram i are tri_off[i]..tri_off[i+1]-1 */
    size_t counts[10];   /* counts[k]: the declared number of k-grams (k = 1..9) */
    long bos, eos, unk;  /* ids of <s>, </s>, <unk> (-1: absent) */
} sd_arpa;

/* Largest vocabulary and bigram count accepted (token ids are 32-bit;
 * 2^26 bigrams take 1.1 GB while parsing). */
#define SD_ARPA_MAX_V ((size_t)1 << 24)
#define SD_ARPA_MAX_BIGRAMS ((size_t)1 << 26)
#define SD_ARPA_MAX_TRIGRAMS ((size_t)1 << 26)

/* Reads an ARPA file.  SD_EIO when it cannot be opened (naming it),
 * SD_EDATA when malformed (path:line), SD_ETOOBIG beyond the limits above
 * or when the parsed model would take more than max_bytes (0: no limit;
 * checked from the declared counts before allocating), SD_ENOMEM.
 * Free with sd_arpa_free(). */
int sd_arpa_load(const char *path, size_t max_bytes, sd_arpa **out, sd_error *err);

/* The same from a NUL-terminated string; `source` names it in messages. */
int sd_arpa_load_string(const char *text, const char *source, size_t max_bytes, sd_arpa **out,
                        sd_error *err);

/* Bytes the parsed model takes for V words, n2 bigrams and n3 trigrams (an
 * estimate that counts 16 bytes of text per word). */
size_t sd_arpa_bytes(size_t V, size_t n2, size_t n3);

/* The index of bigram "w1 w2" (into bi_tok, bi_logp, bi_bo), or -1:
 * O(log |bigrams of w1|). */
long sd_arpa_bigram(const sd_arpa *a, size_t w1, size_t w2);

/* The id of word w, or -1. */
long sd_arpa_find(const sd_arpa *a, const char *w);

void sd_arpa_free(sd_arpa *a);

#endif
