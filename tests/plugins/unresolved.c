/* unresolved.c: a plugin that needs a symbol nobody defines, so dlopen
 * with RTLD_NOW fails and the loader must report dlerror()'s text. */
#include <drift/sampler.h>
extern int drift_test_missing_function(void);
int drift_test_uses_missing(void);
int drift_test_uses_missing(void) { return drift_test_missing_function(); }
