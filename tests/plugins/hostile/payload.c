/* payload.c: a shared object that is no drift plugin and whose
 * constructor leaves a mark (the file DRIFT_TEST_PAYLOAD_MARK names), for
 * the tests that a path read from a file (a draws file's header, a
 * checkpoint's manifest) never gets code loaded: the mark exists exactly
 * when something dlopen()ed it.  In a directory of its own so that scans
 * of tests/plugins never meet it. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void leave_mark(void)
{
    const char *mark = getenv("DRIFT_TEST_PAYLOAD_MARK");
    FILE *f = mark ? fopen(mark, "w") : NULL;
    if (f) {
        fputs("the payload's constructor ran\n", f);
        fclose(f);
    }
}
