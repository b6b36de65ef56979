/* sd_draft.c — the draft-length policies' text form (sd_draft.h). */
#include "sd_draft.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest decimal of the threshold that encodes back to code. */
static void S_real(sd_draft_policy pol, double code, char *buf, size_t len)
{
    snprintf(buf, len, "%.17g", pol.h);
    for (int prec = 1; prec <= 17; prec++) {
        char t[64];
        snprintf(t, sizeof t, "%.*g", prec, pol.h);
        sd_draft_policy back = {pol.rule, strtod(t, NULL)};
        if (sd_draft_policy_encode(back) == code) {
            snprintf(buf, len, "%s", t);
            return;
        }
    }
}

int sd_draft_policy_parse(const char *text, double *code, char *msg, size_t len)
{
    const char *expect = "expected fixed, specdecpp:H (H from 0 to 1) or entropy:H (H >= 0, nats)";
    if (!text)
        text = "";
    if (strcmp(text, "fixed") == 0) {
        *code = 0.0;
        return 0;
    }
    sd_draft_policy pol = {SD_DRAFT_FIXED, 0.0};
    const char *num = NULL;
    if (strncmp(text, "specdecpp:", 10) == 0) {
        pol.rule = SD_DRAFT_SPECDECPP;
        num = text + 10;
    } else if (strncmp(text, "entropy:", 8) == 0) {
        pol.rule = SD_DRAFT_ENTROPY;
        num = text + 8;
    }
    char *end = NULL;
    errno = 0;
    double h = num && *num ? strtod(num, &end) : NAN;
    if (!num || !*num || *end || errno || !isfinite(h) || h < 0.0 ||
        (pol.rule == SD_DRAFT_SPECDECPP && h > 1.0)) {
        snprintf(msg, len, "'%s': %s", text, expect);
        return -1;
    }
    pol.h = h;
    *code = sd_draft_policy_encode(pol);
    return 0;
}

void sd_draft_policy_format(double code, char *buf, size_t len)
{
    sd_draft_policy pol = sd_draft_policy_decode(code);
    char h[64];
    S_real(pol, code, h, sizeof h);
    if (pol.rule == SD_DRAFT_SPECDECPP)
        snprintf(buf, len, "specdecpp:%s", h);
    else if (pol.rule == SD_DRAFT_ENTROPY)
        snprintf(buf, len, "entropy:%s", h);
    else
        snprintf(buf, len, "fixed");
}
