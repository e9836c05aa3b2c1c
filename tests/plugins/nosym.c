/* nosym.c: a shared object that is not a drift plugin (no entry symbol). */
int drift_not_a_plugin(void);
int drift_not_a_plugin(void) { return 42; }
