/* test_docs.c — what the documents claim is true: what README.md,
 * plots/README.md and the help texts say about the figures is what the
 * figure registry (plots/sd_figures.c) holds; quotes are of the files they
 * quote; the README's tour shows what simdec prints; links resolve; the
 * README and docs/performance.md keep their size; no document carries a
 * timestamp or an issue number.  Tests run from the repository root
 * (scripts/run-tests.sh). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plots/sd_figures.h"
#include "test_util.h"

/* Markdown wraps its prose anywhere: text with its line breaks as spaces. */
static char *S_prose(const char *path)
{
    char *s = tu_slurp(path);
    cr_assert_not_null(s);
    for (char *c = s; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return s;
}

/* The figures of simdec's own: their source begins with "simdec". */
static size_t S_own_figures(void)
{
    size_t n = 0;
    for (size_t i = 0; sd_figures[i]; i++)
        n += strncmp(sd_figures[i]->source, "simdec", 6) == 0;
    return n;
}

Test(docs, own_figure_count_is_the_one_stated)
{
    static const char *const words[] = {"no", "one", "two", "three", "four", "five",
                                        "six", "seven", "eight", "nine", "ten"};
    size_t n = S_own_figures();
    cr_assert(n > 0 && n < sizeof words / sizeof *words, "%zu figures of simdec's own", n);
    char want[128], *out = NULL, *readme = S_prose("README.md");
    cr_assert_eq(tu_run("plot --help", &out, NULL), 0);
    snprintf(want, sizeof want, "(and %s of simdec's own)", words[n]);
    cr_expect(tu_contains(out, want), "plot --help should say '%s'", want);
    snprintf(want, sizeof want, "plus %s only simdec can draw", words[n]);
    cr_expect(tu_contains(readme, want), "README.md should say '%s'", want);
    free(out);
    free(readme);
}

/* plots/README.md heads each figure's section "### `NAME` — SOURCE", the
 * source that `plot --list` prints. */
Test(docs, plots_readme_headings_are_the_registry_sources)
{
    char *readme = tu_slurp("plots/README.md");
    for (size_t i = 0; sd_figures[i]; i++) {
        char want[256];
        snprintf(want, sizeof want, "### `%s` — %s\n", sd_figures[i]->name, sd_figures[i]->source);
        cr_expect(tu_contains(readme, want), "plots/README.md should have the heading '%s'", want);
    }
    free(readme);
}

/* The block-verification figure regenerates Fig. 3 of Sun et al. 2025 (the
 * ICLR paper; docs/references.md): its label, its data header and its
 * section in plots/README.md cite the same year.  (The label once read
 * "Sun 2024", the short name of the earlier block-level OT paper.) */
Test(docs, block_figure_cites_the_paper_its_data_cite)
{
    const sd_figure *fig = sd_figure_find("block-fig3-ccdf");
    cr_assert_not_null(fig);
    sd_figure_opts o;
    sd_figure_opts_default(&o);
    o.quick = 1;
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    sd_error err = {0};
    cr_assert_eq(fig->write(f, &o, &err), SD_OK, "%s", err.msg);
    rewind(f);
    char line[512] = "", header[512] = "";
    while (fgets(line, sizeof line, f) && line[0] == '#')
        if (strstr(line, " et al. ") && !header[0])
            strcpy(header, line);
    fclose(f);
    cr_assert(strncmp(header, "# Sun et al. 2025, Fig. 3", 25) == 0, "data header: %s", header);
    cr_expect_str_eq(fig->source, "Sun 2025 Fig. 3");
    char *readme = tu_slurp("plots/README.md");
    cr_expect(tu_contains(readme, "## Sun et al. 2025, *Block Verification Accelerates Speculative Decoding*"),
              "plots/README.md should head the block figure's paper as Sun et al. 2025");
    free(readme);
}

/* Every paper the help texts, `run --list` and `plot --list` cite as
 * "Author et al. YEAR" (or a figure's source "Author YEAR Fig. ...") has a
 * row in docs/references.md under that short name. */
Test(docs, help_texts_cite_papers_listed_in_references)
{
    static const char *const cmds[] = {
        "--help", "run --help", "run --list", "check --help", "eval --help",
        "eval rejections --help", "eval batch-improvement --help", "eval pareto --help",
        "eval accept-length --help", "eval acceptance --help", "eval sprinter --help",
        "eval generation --help", "eval speedup --help", "lp --help", "plot --help",
        "plot --list", "gen --help", "help models",
    };
    char *refs = tu_slurp("docs/references.md");
    regex_t re;
    cr_assert_eq(regcomp(&re, "([A-Z][A-Za-z-]+)( et al\\.)? ((19|20)[0-9][0-9])( Fig\\.|[^0-9])", REG_EXTENDED), 0);
    size_t cited = 0;
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *out = NULL;
        cr_assert_eq(tu_run(cmds[i], &out, NULL), 0, "simdec %s", cmds[i]);
        regmatch_t m[6];
        for (const char *s = out; regexec(&re, s, 6, m, 0) == 0; s += m[0].rm_eo) {
            if (m[2].rm_so < 0 && strncmp(s + m[5].rm_so, " Fig.", 5) != 0)
                continue; /* "Name YEAR" without "et al." cites only in a figure's source */
            char name[128];
            snprintf(name, sizeof name, "%.*s et al. %.*s", (int)(m[1].rm_eo - m[1].rm_so), s + m[1].rm_so,
                     (int)(m[3].rm_eo - m[3].rm_so), s + m[3].rm_so);
            cr_expect(tu_contains(refs, name), "simdec %s cites '%s', which docs/references.md does not list",
                      cmds[i], name);
            cited++;
        }
        free(out);
    }
    regfree(&re);
    cr_expect_geq(cited, 20u, "only %zu citations found", cited);
    free(refs);
}

/* docs/commands.md quotes the core of examples/numpy_sampler.py "as the file
 * has it": every line of that block is a line of the file (indentation aside). */
Test(docs, commands_quote_the_numpy_sampler_as_it_is)
{
    char *readme = tu_slurp("docs/commands.md"), *src = tu_slurp("examples/numpy_sampler.py");
    const char *mark = "as the file has it:\n\n```python\n";
    char *b = strstr(readme, mark);
    cr_assert_not_null(b, "docs/commands.md: the numpy sampler's quoted core not found");
    b += strlen(mark);
    char *end = strstr(b, "```");
    cr_assert_not_null(end);
    *end = '\0';
    size_t lines = 0;
    for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        char want[512];
        snprintf(want, sizeof want, " %s\n", line);
        cr_expect(tu_contains(src, want), "examples/numpy_sampler.py has no line '%s'", line);
    }
    cr_expect_geq(lines, 4u);
    free(readme);
    free(src);
}

/* --- the README is a front door, the docs are for readers ------------------ */

static long S_size(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "cannot stat %s", path);
    return (long)st.st_size;
}

/* The README stays a front door: at most 12 KB (reference lives in docs/). */
Test(docs, readme_is_at_most_12_kb)
{
    long n = S_size("README.md");
    cr_expect_leq(n, 12 * 1024L, "README.md is %ld bytes; at most %ld (move reference to docs/)", n, 12 * 1024L);
}

/* docs/performance.md: the current numbers, not their history (at most 15 KB). */
Test(docs, performance_is_at_most_15_kb)
{
    long n = S_size("docs/performance.md");
    cr_expect_leq(n, 15 * 1024L, "docs/performance.md is %ld bytes; at most %ld", n, 15 * 1024L);
}

/* The documents for readers: README.md and every .md file of docs/. */
static size_t S_doc_paths(char paths[][256], size_t max)
{
    size_t n = 0;
    snprintf(paths[n++], 256, "README.md");
    DIR *d = opendir("docs");
    cr_assert_not_null(d, "cannot open docs/");
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".md") == 0)
            snprintf(paths[n++], 256, "docs/%.250s", e->d_name);
    }
    closedir(d);
    cr_assert_lt(n, max, "more documents than this test can hold");
    return n;
}

/* No document carries a UTC timestamp or an issue number: history belongs
 * to git, not to documents a reader opens (`grep -rnE 'UTC|[Ii]ssue [0-9]+'
 * README.md docs/` finds nothing). */
Test(docs, no_timestamp_or_issue_number)
{
    static char paths[128][256];
    size_t n = S_doc_paths(paths, 128);
    regex_t re;
    cr_assert_eq(regcomp(&re, "UTC|[Ii]ssue [0-9]+", REG_EXTENDED | REG_NEWLINE), 0);
    for (size_t i = 0; i < n; i++) {
        char *s = tu_slurp(paths[i]);
        size_t line = 1;
        regmatch_t m;
        for (const char *p = s; regexec(&re, p, 1, &m, 0) == 0; p += m.rm_eo) {
            for (const char *c = p; c < p + m.rm_so; c++)
                line += *c == '\n';
            cr_expect(0, "%s:%zu: '%.*s' (a timestamp or an issue number)", paths[i], line,
                      (int)(m.rm_eo - m.rm_so), p + m.rm_so);
            for (const char *c = p + m.rm_so; c < p + m.rm_eo; c++)
                line += *c == '\n';
        }
        free(s);
    }
    regfree(&re);
}

/* Every relative link of README.md and docs/NAME.md, [text](target), names a
 * file of the clone (relative to the document), and no document points into
 * a directory outside it. */
Test(docs, links_name_files_of_the_clone)
{
    static char paths[128][256];
    size_t n = S_doc_paths(paths, 128), links = 0;
    for (size_t i = 0; i < n; i++) {
        char *s = tu_slurp(paths[i]);
        const char *dir = strchr(paths[i], '/') ? "docs/" : "";
        for (const char *p = strstr(s, "]("); p; p = strstr(p + 2, "](")) {
            const char *t = p + 2;
            size_t len = strcspn(t, ")# \n");
            if (len == 0 || strncmp(t, "http://", 7) == 0 || strncmp(t, "https://", 8) == 0)
                continue;
            char target[512];
            snprintf(target, sizeof target, "%s%.*s", dir, (int)len, t);
            cr_expect(strstr(target, "shared/") == NULL, "%s links outside the clone: %s", paths[i], target);
            cr_expect(access(target, F_OK) == 0, "%s links to %s, which does not exist", paths[i], target);
            links++;
        }
        free(s);
    }
    cr_expect_geq(links, 30u, "only %zu links found", links);
}

/* The README's tour shows real output: every command of a block that starts
 * "$ ./simdec ..." is run, and every line shown after it is a line of what it
 * prints now.  Lines that describe the machine rather than the result (the
 * `trials` and `setup` lines with their timings, an LP's `seconds`) and the
 * elisions "..." are not compared; `plot` is not run (it writes plots/out). */
Test(docs, readme_tour_output_is_what_simdec_prints, .timeout = 120)
{
    char *readme = tu_slurp("README.md");
    size_t cmds = 0, lines = 0;
    char *out = NULL;
    int skip = 1;
    for (char *line = strtok(readme, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "```", 3) == 0) {
            skip = 1;
            continue;
        }
        if (strncmp(line, "$ ./simdec ", 11) == 0) {
            free(out);
            out = NULL;
            skip = strncmp(line + 11, "plot ", 5) == 0;
            if (!skip) {
                int st = tu_run(line + 11, &out, NULL);
                cr_expect_eq(st, 0, "README: '%s' exits %d", line + 2, st);
                cmds++;
            }
            continue;
        }
        if (skip || !out || strcmp(line, "...") == 0 || strncmp(line, "trials ", 7) == 0 ||
            strncmp(line, "setup ", 6) == 0 || strncmp(line, "  seconds ", 10) == 0)
            continue;
        char want[1024];
        snprintf(want, sizeof want, "\n%s\n", line);
        char *hay = malloc(strlen(out) + 2);
        cr_assert_not_null(hay);
        hay[0] = '\n';
        strcpy(hay + 1, out);
        cr_expect(tu_contains(hay, want), "README: the line '%s' is not in what simdec prints now", line);
        free(hay);
        lines++;
    }
    free(out);
    free(readme);
    cr_expect_geq(cmds, 5u, "only %zu commands of the tour run", cmds);
    cr_expect_geq(lines, 30u, "only %zu lines of the tour compared", lines);
}

/* Every test that docs/findings.md cites as `suite/test` (or all of a suite,
 * `suite/` and a star) is a test of this binary: a finding's evidence must
 * not go stale when tests are renamed. */
Test(docs, findings_cite_tests_that_exist)
{
    char self[4096], cmd[4200];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    cr_assert(k > 0 && (size_t)k < sizeof self - 1, "cannot read /proc/self/exe");
    self[k] = '\0';
    /* env -i: a Criterion worker's environment would make the nested run a worker. */
    snprintf(cmd, sizeof cmd, "env -i '%s' --list 2>&1", self);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 20, len = 0;
    char *list = malloc(cap), suite[128] = "", test[256], line[512], entry[400];
    cr_assert_not_null(list);
    list[0] = '\n';
    list[1] = '\0';
    len = 1;
    /* "suite: N tests", then one line per test, "├── test" (or "|-- test"
     * without a UTF-8 locale), kept as lines "suite/test" and "suite/" with
     * a star. */
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        const char *last = strrchr(line, ' ');
        if ((islower((unsigned char)line[0]) || line[0] == '_') && sscanf(line, "%127[^:]: %*u test", suite) == 1)
            snprintf(entry, sizeof entry, "%s/*\n", suite);
        else if (suite[0] && last && sscanf(last + 1, "%255s", test) == 1)
            snprintf(entry, sizeof entry, "%s/%s\n", suite, test);
        else
            continue;
        size_t n = strlen(entry);
        cr_assert_lt(len + n + 1, cap, "test list too long");
        memcpy(list + len, entry, n + 1);
        len += n;
    }
    cr_assert_eq(pclose(p), 0, "%s failed: %.300s", cmd, list);
    char *doc = tu_slurp("docs/findings.md");
    regex_t re;
    cr_assert_eq(regcomp(&re, "`([a-z_]{3,}/[a-z0-9_*]+)`", REG_EXTENDED), 0);
    regmatch_t m[2];
    size_t cited = 0;
    for (const char *s = doc; regexec(&re, s, 2, m, 0) == 0; s += m[0].rm_eo) {
        int n = (int)(m[1].rm_eo - m[1].rm_so);
        snprintf(entry, sizeof entry, "\n%.*s\n", n, s + m[1].rm_so);
        cr_expect(strstr(list, entry) != NULL, "docs/findings.md cites the test %.*s, which does not exist", n,
                  s + m[1].rm_so);
        cited++;
    }
    cr_expect_geq(cited, 15u, "only %zu tests cited", cited);
    regfree(&re);
    free(doc);
    free(list);
}

/* docs/adding-a-verifier.md quotes the parameter declaration of
 * examples/typical.c as the file has it. */
Test(docs, adding_a_verifier_quotes_typical_declaration)
{
    char *doc = tu_slurp("docs/adding-a-verifier.md"), *src = tu_slurp("examples/typical.c");
    char *b = strstr(src, "static const sd_param_decl S_params[] = {");
    cr_assert_not_null(b, "examples/typical.c: no parameter declaration");
    char *e = strstr(b, "\n};\n");
    cr_assert_not_null(e);
    e[3] = '\0';
    cr_expect(tu_contains(doc, b), "docs/adding-a-verifier.md does not quote examples/typical.c's declaration:\n%s", b);
    free(doc);
    free(src);
}

/* Every paper README.md and the docs cite as "Author et al. YEAR" has a row
 * in docs/references.md under that short name. */
Test(docs, documents_cite_papers_listed_in_references)
{
    static char paths[128][256];
    size_t n = S_doc_paths(paths, 128), cited = 0;
    char *refs = tu_slurp("docs/references.md");
    regex_t re;
    cr_assert_eq(regcomp(&re, "([A-Z][A-Za-z-]+) et al\\. ((19|20)[0-9][0-9])", REG_EXTENDED), 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(paths[i], "docs/references.md") == 0)
            continue;
        char *s = S_prose(paths[i]);
        regmatch_t m[3];
        for (const char *p = s; regexec(&re, p, 3, m, 0) == 0; p += m[0].rm_eo) {
            char name[128];
            snprintf(name, sizeof name, "%.*s et al. %.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so,
                     (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
            cr_expect(tu_contains(refs, name), "%s cites '%s', which docs/references.md does not list", paths[i],
                      name);
            cited++;
        }
        free(s);
    }
    regfree(&re);
    cr_expect_geq(cited, 30u, "only %zu citations found", cited);
    free(refs);
}
