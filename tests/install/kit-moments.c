/* kit-moments.c: make installcheck's judge of a draws file against the
 * closed-form posterior of the gaussian model, N(mean of the c_i,
 * sigma^2/N I) (sigma = 1): the mean of each coordinate, each variance and
 * each covariance must lie within 4.5 Monte Carlo standard errors, the
 * error of each statistic from the effective sample size of its own
 * series (Geyer's initial monotone sequence, computed here, independent of
 * drift's summary code).  Reads Stan CSV as drift writes it and the data
 * CSV the run used; links nothing of drift's.
 *
 *   kit-moments DRAWS.csv DATA.csv [--no-violations]
 *
 * --no-violations also requires the last bound_violations__ to be 0.
 * Exit status 0 when every check passes, 1 otherwise, 2 on bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 16
#define MAXCOLS 256

typedef struct table {
    size_t cols, rows, cap;
    char *names[MAXCOLS];
    double *v;
} table;

/* Reads a CSV file with a header, skipping '#' lines.  0 on success. */
static int read_csv(const char *path, table *t)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kit-moments: cannot open %s\n", path);
        return -1;
    }
    static char line[1 << 16];
    memset(t, 0, sizeof *t);
    int header = 1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        size_t k = 0;
        char *save = NULL;
        if (header) {
            for (char *tok = strtok_r(line, ",", &save); tok && k < MAXCOLS;
                 tok = strtok_r(NULL, ",", &save))
                t->names[k++] = strdup(tok);
            t->cols = k;
            header = 0;
            continue;
        }
        if (t->rows == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 4096;
            double *nv = realloc(t->v, t->cap * t->cols * sizeof(double));
            if (!nv) {
                fclose(f);
                return -1;
            }
            t->v = nv;
        }
        for (char *tok = strtok_r(line, ",", &save); tok && k < t->cols;
             tok = strtok_r(NULL, ",", &save))
            t->v[t->rows * t->cols + k++] = strtod(tok, NULL);
        if (k != t->cols) {
            fprintf(stderr, "kit-moments: %s: row %zu has %zu fields, the "
                            "header %zu\n", path, t->rows + 1, k, t->cols);
            fclose(f);
            return -1;
        }
        t->rows++;
    }
    fclose(f);
    return t->cols && t->rows ? 0 : -1;
}

static void table_free(table *t)
{
    for (size_t k = 0; k < t->cols; k++)
        free(t->names[k]);
    free(t->v);
}

static long column(const table *t, const char *name)
{
    for (size_t k = 0; k < t->cols; k++)
        if (!strcmp(t->names[k], name))
            return (long)k;
    return -1;
}

/* Effective sample size by Geyer's initial monotone sequence estimator. */
static double ess(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    double c0 = 0;
    for (size_t i = 0; i < n; i++)
        c0 += (x[i] - m) * (x[i] - m);
    c0 /= (double)n;
    if (!(c0 > 0))
        return (double)n;
    double sum = 0, prev = INFINITY;
    for (size_t lag = 0; lag + 1 < n; lag += 2) {
        double g = 0;
        for (size_t l = lag; l <= lag + 1; l++) {
            double c = 0;
            for (size_t i = 0; i + l < n; i++)
                c += (x[i] - m) * (x[i + l] - m);
            g += c / (double)n / c0;
        }
        if (g <= 0)
            break;
        if (g > prev)
            g = prev;
        prev = g;
        sum += g;
    }
    double tau = 2 * sum - 1;
    return (double)n / (tau > 1e-3 ? tau : 1e-3);
}

static int check(const char *what, const double *x, size_t n, double truth)
{
    double m = 0, v = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        v += (x[i] - m) * (x[i] - m);
    v /= (double)(n - 1);
    double e = ess(x, n), se = sqrt(v / e);
    int ok = e >= 100 && fabs(m - truth) < 4.5 * se;
    printf("  %-12s %12.6g  exact %12.6g  %+6.2f se  (se %.2g, ess %.0f)  "
           "%s\n",
           what, m, truth, (m - truth) / se, se, e, ok ? "ok" : "FAIL");
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: kit-moments DRAWS.csv DATA.csv "
                        "[--no-violations]\n");
        return 2;
    }
    int no_viol = argc > 3 && !strcmp(argv[3], "--no-violations");
    table dr, da;
    if (read_csv(argv[1], &dr) || read_csv(argv[2], &da))
        return 2;
    size_t D = 0;
    long pc[MAXD], cc[MAXD];
    for (; D < MAXD; D++) {
        char name[32];
        snprintf(name, sizeof name, "theta.%zu", D + 1);
        pc[D] = column(&dr, name);
        snprintf(name, sizeof name, "c.%zu", D + 1);
        cc[D] = column(&da, name);
        if (pc[D] < 0 || cc[D] < 0)
            break;
    }
    if (D == 0) {
        fprintf(stderr, "kit-moments: no theta.1 in %s or no c.1 in %s\n",
                argv[1], argv[2]);
        table_free(&dr);
        table_free(&da);
        return 2;
    }
    double mu[MAXD] = {0}, var = 1.0 / (double)da.rows;
    for (size_t i = 0; i < da.rows; i++)
        for (size_t k = 0; k < D; k++)
            mu[k] += da.v[i * da.cols + (size_t)cc[k]] / (double)da.rows;
    size_t n = dr.rows;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return 2;
    printf("kit-moments: %s: %zu draws of %zu coordinates against N(mean c, "
           "I/%zu)\n", argv[1], n, D, da.rows);
    int ok = 1;
    for (size_t a = 0; a < D; a++) {
        char what[32];
        for (size_t t = 0; t < n; t++)
            s[t] = dr.v[t * dr.cols + (size_t)pc[a]];
        snprintf(what, sizeof what, "mean %zu", a + 1);
        ok &= check(what, s, n, mu[a]);
        for (size_t b = a; b < D; b++) {
            for (size_t t = 0; t < n; t++)
                s[t] = (dr.v[t * dr.cols + (size_t)pc[a]] - mu[a]) *
                       (dr.v[t * dr.cols + (size_t)pc[b]] - mu[b]);
            snprintf(what, sizeof what, "cov %zu,%zu", a + 1, b + 1);
            ok &= check(what, s, n, a == b ? var : 0);
        }
    }
    if (no_viol) {
        long vc = column(&dr, "bound_violations__");
        double last = vc < 0 ? NAN : dr.v[(n - 1) * dr.cols + (size_t)vc];
        int vok = last == 0;
        printf("  bound_violations__ at the end: %g  %s\n", last,
               vok ? "ok" : "FAIL");
        ok &= vok;
    }
    free(s);
    table_free(&dr);
    table_free(&da);
    return ok ? 0 : 1;
}
