/* lref.c: reference values and moment checks for the Langevin-family
 * tests (see lref.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/rng.h"
#include "lref.h"

static void inv2(size_t D, const double *A, double *B)
{
    if (D == 1) {
        B[0] = 1 / A[0];
        return;
    }
    double det = A[0] * A[3] - A[1] * A[2];
    B[0] = A[3] / det;
    B[1] = -A[1] / det;
    B[2] = -A[2] / det;
    B[3] = A[0] / det;
}

void lref_make(lref_target *t, size_t N, size_t D, double rho, double s1,
               double s2, double tau, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->N = N;
    t->D = D;
    t->rho = rho;
    t->s1 = s1;
    t->s2 = s2;
    t->tau = tau;
    double S[4] = {s1 * s1, rho * s1 * s2, rho * s1 * s2, s2 * s2};
    if (D == 1)
        S[0] = s1 * s1;
    inv2(D, S, t->P);
    /* Cholesky factor of S, lower. */
    double L11 = s1, L21 = rho * s2, L22 = s2 * sqrt(1 - rho * rho);
    double *v = malloc(N * D * sizeof *v);
    assert_non_null(v);
    drift_rng r;
    drift_rng_seed(&r, seed, 0);
    const double mu[2] = {1.0, -2.0};
    double sum[2] = {0, 0};
    for (size_t i = 0; i < N; i++) {
        double z1 = drift_rng_normal(&r), z2 = drift_rng_normal(&r);
        v[i * D] = mu[0] + L11 * z1;
        if (D == 2)
            v[i * D + 1] = mu[1] + L21 * z1 + L22 * z2;
        for (size_t j = 0; j < D; j++)
            sum[j] += v[i * D + j];
    }
    for (size_t j = 0; j < D; j++)
        for (size_t k = 0; k < D; k++) {
            double s = 0;
            for (size_t i = 0; i < N; i++)
                s += (v[i * D + j] - sum[j] / N) * (v[i * D + k] - sum[k] / N);
            t->Sc[j * D + k] = s / N;
        }
    for (size_t k = 0; k < D * D; k++)
        t->Q[k] = (double)N * t->P[k];
    if (tau > 0)
        for (size_t j = 0; j < D; j++)
            t->Q[j * D + j] += 1 / (tau * tau);
    inv2(D, t->Q, t->Qinv);
    double Ps[2] = {0, 0};
    for (size_t j = 0; j < D; j++)
        for (size_t k = 0; k < D; k++)
            Ps[j] += t->P[j * D + k] * sum[k];
    for (size_t j = 0; j < D; j++) {
        t->m[j] = 0;
        for (size_t k = 0; k < D; k++)
            t->m[j] += t->Qinv[j * D + k] * Ps[k];
    }
    const char *names[2] = {"y.1", "y.2"};
    t->csv = th_write_csv(names, D, v, N);
    free(v);
    snprintf(t->set[0], sizeof t->set[0], "rho=%.17g", rho);
    snprintf(t->set[1], sizeof t->set[1], "s1=%.17g", s1);
    snprintf(t->set[2], sizeof t->set[2], "s2=%.17g", s2);
    snprintf(t->set[3], sizeof t->set[3], "tau=%.17g", tau);
    for (int k = 0; k < 4; k++)
        t->set_ptr[k] = t->set[k];
}

void lref_free(lref_target *t)
{
    if (t->csv) {
        unlink(t->csv);
        free(t->csv);
    }
    t->csv = NULL;
}

void lref_open(th_problem *tp, lref_target *t)
{
    th_open(tp, "corrgauss", t->csv, t->set_ptr, 4);
}

void lref_gnoise(const lref_target *t, size_t batch, double *G)
{
    size_t D = t->D;
    double PS[4] = {0};
    for (size_t j = 0; j < D; j++)
        for (size_t k = 0; k < D; k++)
            for (size_t q = 0; q < D; q++)
                PS[j * D + k] += t->P[j * D + q] * t->Sc[q * D + k];
    double f = (double)t->N * (double)t->N / (double)batch;
    for (size_t j = 0; j < D; j++)
        for (size_t k = 0; k < D; k++) {
            double s = 0;
            for (size_t q = 0; q < D; q++)
                s += PS[j * D + q] * t->P[q * D + k];
            G[j * D + k] = f * s;
        }
}

static void matmul(size_t n, const double *A, const double *B, double *C,
                   int transB)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t k = 0; k < n; k++)
                s += A[i * n + k] * (transB ? B[j * n + k] : B[k * n + j]);
            C[i * n + j] = s;
        }
}

void lref_lyap(size_t n, const double *A, const double *W, double *S)
{
    /* S = sum_k A^k W A'^k, summed by doubling: S <- S + Ak S Ak',
     * Ak <- Ak^2, which after j rounds has summed 2^j terms. */
    double *Ak = malloc(n * n * sizeof *Ak), *T = malloc(n * n * sizeof *T),
           *U = malloc(n * n * sizeof *U);
    assert_true(Ak && T && U);
    memcpy(Ak, A, n * n * sizeof *Ak);
    memcpy(S, W, n * n * sizeof *S);
    for (int round = 0; round < 60; round++) {
        matmul(n, Ak, S, T, 0);
        matmul(n, T, Ak, U, 1);
        double norm = 0;
        for (size_t k = 0; k < n * n; k++) {
            S[k] += U[k];
            norm = fmax(norm, fabs(U[k]));
        }
        matmul(n, Ak, Ak, T, 0);
        memcpy(Ak, T, n * n * sizeof *Ak);
        if (norm < 1e-17)
            break;
    }
    free(Ak);
    free(T);
    free(U);
}

enum { BATCHES = 40 };

/* Batch-means standard error of the mean of the series x[i * stride],
 * i < n. */
static double bm_se(const double *x, size_t n, size_t stride)
{
    size_t L = n / BATCHES;
    assert_true(L >= 10);
    double bm[BATCHES], tot = 0;
    for (size_t b = 0; b < BATCHES; b++) {
        double s = 0;
        for (size_t i = b * L; i < (b + 1) * L; i++)
            s += x[i * stride];
        bm[b] = s / (double)L;
        tot += bm[b];
    }
    tot /= BATCHES;
    double v = 0;
    for (size_t b = 0; b < BATCHES; b++)
        v += (bm[b] - tot) * (bm[b] - tot);
    v /= BATCHES - 1;
    return sqrt(v / BATCHES);
}

double lref_se(const th_draws *d, size_t col)
{
    return bm_se(d->v + col, d->n, d->cols);
}

void lref_compute(const th_draws *d, size_t col0, size_t D, lref_moments *mo)
{
    memset(mo, 0, sizeof *mo);
    size_t n = d->n;
    for (size_t j = 0; j < D; j++) {
        mo->mean[j] = th_mean(d, col0 + j, 0);
        mo->se_mean[j] = lref_se(d, col0 + j);
    }
    double *prod = malloc(n * sizeof *prod);
    assert_non_null(prod);
    for (size_t j = 0; j < D; j++)
        for (size_t k = j; k < D; k++) {
            double s = 0;
            for (size_t i = 0; i < n; i++) {
                prod[i] = (d->v[i * d->cols + col0 + j] - mo->mean[j]) *
                          (d->v[i * d->cols + col0 + k] - mo->mean[k]);
                s += prod[i];
            }
            mo->cov[j * D + k] = mo->cov[k * D + j] = s / (double)(n - 1);
            mo->se_cov[j * D + k] = mo->se_cov[k * D + j] = bm_se(prod, n, 1);
        }
    free(prod);
}

void lref_check(const char *label, const lref_moments *mo, size_t D,
                const double *m, const double *S, double allow_mean,
                double allow_cov)
{
    int ok = 1;
    for (size_t j = 0; j < D; j++) {
        double err = fabs(mo->mean[j] - m[j]);
        int good = err < 4.5 * mo->se_mean[j] + allow_mean;
        print_message("%s: mean[%zu] %.6g, reference %.6g, |diff| %.3g "
                      "(%.2f se) %s\n",
                      label, j + 1, mo->mean[j], m[j], err,
                      err / mo->se_mean[j], good ? "ok" : "FAIL");
        ok &= good;
    }
    for (size_t j = 0; j < D; j++)
        for (size_t k = j; k < D; k++) {
            double err = fabs(mo->cov[j * D + k] - S[j * D + k]);
            int good = err < 4.5 * mo->se_cov[j * D + k] + allow_cov;
            print_message("%s: cov[%zu,%zu] %.6g, reference %.6g, |diff| "
                          "%.3g (%.2f se) %s\n",
                          label, j + 1, k + 1, mo->cov[j * D + k],
                          S[j * D + k], err, err / mo->se_cov[j * D + k],
                          good ? "ok" : "FAIL");
            ok &= good;
        }
    assert_true(ok);
}
