/* crashentry.c: a sampler plugin whose entry point dies of SIGSEGV, for
 * the loader's tests: a scan must inspect it in a child process, report
 * it by path and go on; a named lookup of another sampler must not open
 * it. */
#include <signal.h>

#include <drift/sampler.h>

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    raise(SIGSEGV);
    return 0;
}
