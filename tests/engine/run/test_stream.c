/* test_stream.c: access strategies.  Random reshuffle and cyclic access
 * visit every row exactly once per pass, also when minibatches straddle
 * pass boundaries; random access draws rows uniformly with replacement;
 * the look-ahead used for prefetching never changes the sequence. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "engine/run/stream.h"
#include "harness.h"

static void check_passes(drift_access mode, size_t N, size_t batch)
{
    drift_rng r;
    drift_rng_seed(&r, 3, 1);
    drift_stream s;
    assert_int_equal(drift_stream_init(&s, mode, N, &r, batch), DRIFT_OK);
    size_t total = 4 * N;
    size_t *seq = malloc((total + batch) * sizeof *seq);
    assert_non_null(seq);
    size_t got = 0;
    while (got < total) {
        drift_stream_take(&s, batch, seq + got);
        got += batch;
        size_t k;
        drift_stream_peek(&s, batch, &k); /* must not disturb anything */
    }
    for (size_t p = 0; p < 4; p++) {
        unsigned char *seen = calloc(N, 1);
        assert_non_null(seen);
        for (size_t i = 0; i < N; i++) {
            size_t row = seq[p * N + i];
            assert_true(row < N);
            assert_false(seen[row]);
            seen[row] = 1;
            if (mode == DRIFT_ACCESS_CA)
                assert_int_equal(row, i);
        }
        free(seen);
    }
    if (mode == DRIFT_ACCESS_RR) {
        /* Each pass is a fresh permutation. */
        assert_true(memcmp(seq, seq + N, N * sizeof *seq) != 0);
    }
    free(seq);
    drift_stream_free(&s);
}

static void test_rr_once_per_pass(void **state)
{
    (void)state;
    check_passes(DRIFT_ACCESS_RR, 101, 7);  /* batches straddle passes */
    check_passes(DRIFT_ACCESS_RR, 100, 10);
    check_passes(DRIFT_ACCESS_RR, 5, 5);
}

static void test_ca_once_per_pass(void **state)
{
    (void)state;
    check_passes(DRIFT_ACCESS_CA, 101, 7);
    check_passes(DRIFT_ACCESS_CA, 64, 64);
}

static void test_ra_uniform(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 8, 1);
    drift_stream s;
    enum { N = 20, DRAWS = 200000, B = 50 };
    assert_int_equal(drift_stream_init(&s, DRIFT_ACCESS_RA, N, &r, B), 0);
    long counts[N] = {0};
    size_t rows[B];
    for (int i = 0; i < DRAWS / B; i++) {
        drift_stream_take(&s, B, rows);
        for (int k = 0; k < B; k++) {
            assert_true(rows[k] < N);
            counts[rows[k]]++;
        }
    }
    double chi2 = 0, e = (double)DRAWS / N;
    for (int k = 0; k < N; k++)
        chi2 += (counts[k] - e) * (counts[k] - e) / e;
    assert_true(chi2 < 43.82); /* qchisq(0.999, 19) */
    drift_stream_free(&s);
}

static void test_lookahead_transparent(void **state)
{
    (void)state;
    drift_rng r;
    drift_rng_seed(&r, 21, 1);
    drift_stream a, b;
    assert_int_equal(drift_stream_init(&a, DRIFT_ACCESS_RR, 50, &r, 8), 0);
    assert_int_equal(drift_stream_init(&b, DRIFT_ACCESS_RR, 50, &r, 8), 0);
    size_t x[8], y[8], k;
    for (int i = 0; i < 40; i++) {
        drift_stream_take(&a, 8, x);
        drift_stream_peek(&b, 8, &k);
        drift_stream_take(&b, 8, y);
        assert_memory_equal(x, y, sizeof x);
    }
    drift_stream_free(&a);
    drift_stream_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rr_once_per_pass),
        cmocka_unit_test(test_ca_once_per_pass),
        cmocka_unit_test(test_ra_uniform),
        cmocka_unit_test(test_lookahead_transparent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
