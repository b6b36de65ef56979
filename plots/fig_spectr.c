/* fig_spectr.c — the figures of Sun, Suresh, Ro, Beirami, Jain & Yu 2023,
 * "SpecTr: Fast Speculative Decoding via Optimal Transport" (NeurIPS
 * 2023): Figs. 4-6, the acceptance at one position with k drafts of the
 * optimal plan (OTM-k), of k-Seq and of multi-round recursive rejection
 * sampling.
 *
 * Exact values come from sd_exact_otm.h (the sorted-prefix OTM-k, RRS and
 * the closed forms of the paper's App. B) and sd_kseq.h; Monte-Carlo values
 * from the spectr (k-Seq) and rrs verifiers through the trial engine.  The
 * file ends in its table of figures.
 *
 * The data files tag the paper "Sun et al. 2023" (an older naming); those printed
 * strings are kept so that the files stay byte for byte the same. */
#include <math.h>

#include "../src/sd_exact_otm.h"
#include "../src/sd_kseq.h"
#include "sd_fig_util.h"

/* Blocks "[exact]" and "[mc]" for p = Ber(0.25), q = Ber(b) over b. */
static int S_spectr_bernoulli(FILE *f, const sd_figure_opts *o, const size_t *ks, size_t nk,
                              int with_rrs, uint64_t seed, sd_error *err)
{
    double p[2], q[2];
    sd_fig_ber(0.25, p);
    int rc = SD_OK;
    double worst = 0.0;
    sd_fig_block(f, "exact", with_rrs ? "b then for each k: OTM k-Seq multi-round(RRS)"
                                      : "b then for each k: OTM k-Seq");
    for (int i = 0; i <= 100 && !rc; i++) {
        double b = i / 100.0;
        sd_fig_ber(b, q);
        fprintf(f, "%.10g", b);
        for (size_t j = 0; j < nk && !rc; j++) {
            double otm, kseq, rrs;
            rc = sd_exact_otm_acceptance(p, q, 2, ks[j], &otm, NULL, err);
            if (!rc)
                rc = sd_kseq_acceptance(p, q, 2, ks[j], &kseq, err);
            if (!rc && with_rrs)
                rc = sd_exact_rrs_acceptance(p, q, 2, ks[j], &rrs, err);
            if (rc)
                break;
            double cf = sd_exact_otm_bernoulli(0.25, b, ks[j]);
            if (fabs(cf - otm) > worst)
                worst = fabs(cf - otm);
            fprintf(f, " %.10g %.10g", otm, kseq);
            if (with_rrs)
                fprintf(f, " %.10g", rrs);
        }
        fputc('\n', f);
    }
    if (rc)
        return rc;
    fprintf(f, "# largest |OTM sorted-prefix - closed form of Sun et al. 2023, App. B| = %.3g\n", worst);
    uint64_t trials = sd_fig_trials(o, 20000);
    sd_fig_block(f, "mc", with_rrs ? "b then for each k: kseq_mean lo hi rrs_mean lo hi"
                                   : "b then for each k: kseq_mean lo hi");
    fprintf(f, "# spectr (k-Seq) and rrs verifiers at one position; seed %llu + 100 i + 10 j (+1 rrs),"
               " %llu trials per point\n",
            (unsigned long long)seed, (unsigned long long)trials);
    for (int i = 1; i <= 19 && !rc; i++) {
        double b = i / 20.0;
        sd_fig_ber(b, q);
        fprintf(f, "%.10g", b);
        for (size_t j = 0; j < nk && !rc; j++) {
            uint64_t s = seed + 100 * (uint64_t)i + 10 * j;
            sd_fig_est e;
            rc = sd_fig_accept_mc("spectr", p, q, 2, ks[j], s, trials, &e, err);
            if (!rc)
                sd_fig_put_est(f, e);
            if (!rc && with_rrs) {
                rc = sd_fig_accept_mc("rrs", p, q, 2, ks[j], s + 1, trials, &e, err);
                if (!rc)
                    sd_fig_put_est(f, e);
            }
        }
        fputc('\n', f);
    }
    return rc;
}

static int S_spectr4(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t ks[] = {2, 4, 8};
    sd_fig_head(f, "spectr-fig4-bernoulli", "Sun et al. 2023, Fig. 4: acceptance of OTM-k (optimal) vs k-Seq, p = Ber(0.25), q = Ber(b), k = 2 4 8");
    return sd_fig_done(f, S_spectr_bernoulli(f, o, ks, 3, 0, o->seed + 4000, err), err);
}

static int S_spectr6(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    static const size_t ks[] = {2, 4};
    sd_fig_head(f, "spectr-fig6-multiround", "Sun et al. 2023, Fig. 6: OTM-k vs k-Seq vs multi-round (recursive rejection sampling), p = Ber(0.25), q = Ber(b), k = 2 4");
    return sd_fig_done(f, S_spectr_bernoulli(f, o, ks, 2, 1, o->seed + 6000, err), err);
}

static int S_spectr5(FILE *f, const sd_figure_opts *o, sd_error *err)
{
    enum { D = 120, KMAX = 30, ND = 4 };
    static const size_t dqs[ND] = {60, 30, 12, 6};
    static const size_t kmc[] = {1, 2, 4, 8, 16, 30};
    double p[D], q[ND][D];
    for (size_t x = 0; x < D; x++) {
        p[x] = 1.0 / D;
        for (size_t j = 0; j < ND; j++)
            q[j][x] = x < dqs[j] ? 1.0 / (double)dqs[j] : 0.0;
    }
    sd_fig_head(f, "spectr-fig5-uniform", "Sun et al. 2023, Fig. 5: optimal acceptance alpha_k vs k, p = U(120), q = U(d_q), d_q = 60 30 12 6");
    sd_fig_block(f, "exact", "k then for each d_q: alpha_k(sorted prefix) closed_form 1-(1-1/r)^k");
    int rc = SD_OK;
    for (size_t k = 1; k <= KMAX && !rc; k++) {
        fprintf(f, "%zu", k);
        for (size_t j = 0; j < ND && !rc; j++) {
            double a;
            rc = sd_exact_otm_acceptance(p, q[j], D, k, &a, NULL, err);
            if (!rc)
                fprintf(f, " %.10g %.10g", a, sd_exact_otm_uniform((double)D / (double)dqs[j], k));
        }
        fputc('\n', f);
    }
    uint64_t trials = sd_fig_trials(o, 20000);
    sd_fig_block(f, "mc", "k then for each d_q: kseq_mean ci95_lo ci95_hi (k-Seq attains alpha_k here, Sun et al. 2023 B.2)");
    fprintf(f, "# spectr verifier at one position; seed %llu + 100 k + j, %llu trials per point\n",
            (unsigned long long)(o->seed + 5000), (unsigned long long)trials);
    for (size_t i = 0; i < sizeof kmc / sizeof *kmc && !rc; i++) {
        fprintf(f, "%zu", kmc[i]);
        for (size_t j = 0; j < ND && !rc; j++) {
            sd_fig_est e;
            rc = sd_fig_accept_mc("spectr", p, q[j], D, kmc[i], o->seed + 5000 + 100 * kmc[i] + j,
                                  trials, &e, err);
            if (!rc)
                sd_fig_put_est(f, e);
        }
        fputc('\n', f);
    }
    return sd_fig_done(f, rc, err);
}

/* ---- the table of figures ------------------------------------------------ */

const sd_figure sd_fig_spectr_fig4 = {
    "spectr-fig4-bernoulli", "Sun 2023 Fig. 4",
    "For p = Ber(0.25), q = Ber(b), the optimal k-draft acceptance OTM-k is at or above k-Seq's for k = 2, 4, 8 (strictly above for most b), and both grow with k.",
    S_spectr4};
const sd_figure sd_fig_spectr_fig5 = {
    "spectr-fig5-uniform", "Sun 2023 Fig. 5",
    "For p = U(120) and q = U(d_q), the optimal acceptance alpha_k = 1 - (1 - d_q/120)^k grows with k, and k-Seq attains it.",
    S_spectr5};
const sd_figure sd_fig_spectr_fig6 = {
    "spectr-fig6-multiround", "Sun 2023 Fig. 6",
    "OTM-k >= k-Seq >= multi-round (recursive rejection sampling) acceptance for p = Ber(0.25), q = Ber(b), k = 2 and 4.",
    S_spectr6};
