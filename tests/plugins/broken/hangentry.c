/* hangentry.c: a sampler plugin whose entry point never returns, for the
 * loader's tests: a scan must give up on it after DRIFT_PLUGIN_TIMEOUT
 * seconds, report it by path and go on. */
#include <unistd.h>

#include <drift/sampler.h>

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    for (;;)
        pause();
    return 0;
}
