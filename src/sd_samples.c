/* sd_samples.c — the samples format (sd_samples.h). */
#include "sd_samples.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

int sd_samples_write(FILE *f, const uint32_t *tokens, uint64_t trials, size_t k, sd_error *err)
{
    for (uint64_t i = 0; i < trials; i++) {
        const uint32_t *row = tokens + (size_t)i * k;
        for (size_t n = 0; n < k; n++)
            if (fprintf(f, n ? " %" PRIu32 : "%" PRIu32, row[n]) < 0)
                return sd_error_set(err, SD_EOUTPUT, "cannot write samples: %s", strerror(errno));
        if (putc('\n', f) == EOF)
            return sd_error_set(err, SD_EOUTPUT, "cannot write samples: %s", strerror(errno));
    }
    return SD_OK;
}

/* The reader's state: where it is and the token being read. */
typedef struct {
    const char *name;
    size_t V, L;
    uint64_t line;
    size_t col;        /* bytes of the line read so far */
    size_t ntok;       /* tokens completed on the line */
    size_t k;          /* cell index of the line's first min(ntok, L) tokens */
    int in_tok;
    int space;         /* the last byte was a separating space */
    size_t tok_col;    /* column of the token's first digit */
    size_t value;      /* its value, saturated at V */
    char text[24];     /* its first digits, for messages */
    size_t text_len;
    size_t digits;     /* its length */
} S_reader;

/* c as a message shows it: itself when printable, else \xHH. */
static void S_show(int c, char *buf, size_t len)
{
    if (c >= 0x21 && c <= 0x7e)
        snprintf(buf, len, "'%c'", c);
    else
        snprintf(buf, len, "byte \\x%02x", (unsigned)c & 0xffu);
}

static int S_fail_at(const S_reader *r, size_t col, sd_error *err, const char *what)
{
    return sd_error_set(err, SD_EDATA, "%s: line %llu, column %zu: %s", r->name,
                        (unsigned long long)r->line, col, what);
}

/* Ends the token being read. */
static int S_token_end(S_reader *r, sd_error *err)
{
    r->in_tok = 0;
    if (r->value >= r->V) {
        char msg[128];
        snprintf(msg, sizeof msg, "token %s%s: expected a token id 0..%zu (V = %zu)", r->text,
                 r->digits > r->text_len ? "..." : "", r->V - 1, r->V);
        return S_fail_at(r, r->tok_col, err, msg);
    }
    if (r->ntok < r->L)
        r->k = r->k * r->V + r->value;
    r->ntok++;
    return SD_OK;
}

int sd_samples_count(FILE *f, const char *name, size_t V, size_t L, double *cells, uint64_t *lines,
                     sd_error *err)
{
    S_reader r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.V = V;
    r.L = L;
    r.line = 1;
    *lines = 0;
    int c, cr = 0, rc;
    do {
        c = getc(f);
        if (c == EOF && ferror(f))
            return sd_error_set(err, SD_EIO, "%s: read error: %s", name, strerror(errno));
        if (c != EOF)
            r.col++;
        if (r.col > SD_SAMPLES_MAX_LINE)
            return S_fail_at(&r, r.col, err, "line longer than 64 MiB");
        char msg[160], shown[16];
        if (cr && c != '\n') {
            S_show('\r', shown, sizeof shown);
            snprintf(msg, sizeof msg, "%s not followed by the end of the line", shown);
            return S_fail_at(&r, r.col - (c != EOF), err, msg);
        }
        if (c >= '0' && c <= '9') {
            if (!r.in_tok) {
                r.in_tok = 1;
                r.tok_col = r.col;
                r.value = 0;
                r.text_len = 0;
                r.digits = 0;
            }
            r.digits++;
            if (r.text_len + 1 < sizeof r.text) {
                r.text[r.text_len++] = (char)c;
                r.text[r.text_len] = '\0';
            }
            size_t d = (size_t)(c - '0');
            /* saturates at V (any value >= V is refused) */
            r.value = r.value >= V || r.value > (V - d) / 10 ? V : r.value * 10 + d;
            r.space = 0;
            continue;
        }
        if (c == ' ') {
            if (!r.in_tok)
                return S_fail_at(&r, r.col, err,
                                 r.ntok ? "two spaces in a row; expected token ids separated by one space"
                                        : "a space before the first token; expected a token id");
            if ((rc = S_token_end(&r, err)))
                return rc;
            r.space = 1;
            continue;
        }
        if (c == '\r') {
            cr = 1;
            if (r.in_tok && (rc = S_token_end(&r, err)))
                return rc;
            continue;
        }
        if (c != '\n' && c != EOF) {
            S_show(c, shown, sizeof shown);
            snprintf(msg, sizeof msg, "%s: expected a token id (a whole number 0..%zu) or a single space",
                     shown, V - 1);
            return S_fail_at(&r, r.col, err, msg);
        }
        /* The end of a line (or of the file). */
        if (c == EOF && r.col == 0 && !cr)
            break; /* after the last '\n' */
        if (r.in_tok && (rc = S_token_end(&r, err)))
            return rc;
        if (r.space)
            return S_fail_at(&r, r.col - 1 - cr, err, "a space at the end of the line; expected a token id after it");
        if (r.ntok < L) {
            snprintf(msg, sizeof msg, "%zu token%s; expected at least %zu (--L)", r.ntok,
                     r.ntok == 1 ? "" : "s", L);
            return S_fail_at(&r, r.col + (c == EOF), err, msg);
        }
        cells[r.k] += 1.0;
        (*lines)++;
        r.line++;
        r.col = 0;
        r.ntok = 0;
        r.k = 0;
        r.text_len = 0;
        r.space = 0;
        cr = 0;
    } while (c != EOF);
    if (*lines == 0)
        return sd_error_set(err, SD_EDATA, "%s: no samples (the file is empty); expected one line of token "
                                           "ids per trial", name);
    return SD_OK;
}
