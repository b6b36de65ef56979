/* sd_kernel_pair.h — what the sorted-table lockstep kernels
 * (kernel_block.c, kernel_greedy.c) share: the switch of their x86 vector
 * code, and the pair of sd_kernel_type each defines, the kernel and its
 * deliberately broken control, which differ only in their names and in
 * the plan's flag `broken`. */
#ifndef SD_KERNEL_PAIR_H
#define SD_KERNEL_PAIR_H

#include <stdlib.h>

#include "../engine/sd_verifier.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SD_KERNEL_X86 1
#else
#define SD_KERNEL_X86 0
#endif

/* The alias tables' columns K = 2^lgK: the least lgK >= 1 with K >= V. */
static inline unsigned sd_kernel_lg_columns(size_t V)
{
    unsigned lgK = 1;
    while (((size_t)1 << lgK) < V)
        lgK++;
    return lgK;
}

/* The end of making a plan pl with status rc: on an error pl is freed by
 * plan_free, else it is *plan.  Returns rc. */
static inline int sd_kernel_plan_done(int rc, void *pl, void (*plan_free)(void *), void **plan)
{
    if (rc) {
        plan_free(pl);
        return rc;
    }
    *plan = pl;
    return SD_OK;
}

/* static void S_work_free(void *work): frees a work area S_work whose
 * arrays are one allocation, its field arena (NULL before it is made). */
#define SD_KERNEL_WORK_FREE                                                                                            \
    static void S_work_free(void *work)                                                                                \
    {                                                                                                                  \
        S_work *w = work;                                                                                              \
        if (!w)                                                                                                        \
            return;                                                                                                    \
        free(w->arena);                                                                                                \
        free(w);                                                                                                       \
    }

/* The sd_kernel_type var named kname with the observations kobs, its plans
 * made by plan and freed by S_plan_free, its work areas by S_work_new and
 * S_work_free, its trials run by S_run. */
#define SD_KERNEL_TYPE(var, kname, kobs, plan)                                                                         \
    const sd_kernel_type var = {.name = kname,                                                                         \
                                .supports = (kobs),                                                                    \
                                .plan_new = plan,                                                                      \
                                .plan_free = S_plan_free,                                                              \
                                .work_new = S_work_new,                                                                \
                                .work_free = S_work_free,                                                              \
                                .run = S_run}

/* static int fn(plan, m, par, max_bytes, threads, err): the plan_new of
 * sd_kernel_type, S_new(plan, m, par, max_bytes, broken, err) (the thread
 * count unused). */
#define SD_KERNEL_PLAN_NEW(fn, broken)                                                                                 \
    static int fn(void **plan, const sd_model *m, const sd_params *par, size_t max_bytes, unsigned threads,            \
                  sd_error *err)                                                                                       \
    {                                                                                                                  \
        (void)threads;                                                                                                 \
        return S_new(plan, m, par, max_bytes, (broken), err);                                                          \
    }

/* The kernel `kernel` named kname with the observations kobs, and its
 * control kernel##_broken named kname "-broken"; their plans are
 * S_new(plan, m, par, max_bytes, broken, err) with broken 0 and 1 (the
 * thread count unused), both freed by S_plan_free, their work areas by
 * S_work_new and S_work_free, their trials run by S_run, all defined by
 * the including file. */
#define SD_KERNEL_PAIR(kernel, kname, kobs)                                                                            \
    SD_KERNEL_PLAN_NEW(S_new_exact, 0)                                                                                 \
    SD_KERNEL_PLAN_NEW(S_new_broken, 1)                                                                                \
    SD_KERNEL_TYPE(kernel, kname, kobs, S_new_exact);                                                                  \
    SD_KERNEL_TYPE(kernel##_broken, kname "-broken", kobs, S_new_broken)

#endif
