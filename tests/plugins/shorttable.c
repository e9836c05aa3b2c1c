/* shorttable.c: n_hparams (50) larger than its table (1 entry), as in the
 * crasher plugin-scan-bad-table-segv: reading past the table used to crash
 * every command that scanned the plugin's directory.  The loader must
 * refuse it with a message (what it finds past the table decides which
 * check says so). */
#include <drift/sampler.h>
#define BAD_NAME "shorttable"
#define BAD_N_HPARAMS 50
#define BAD_N_COLUMNS 40
#include "badsampler.h"
