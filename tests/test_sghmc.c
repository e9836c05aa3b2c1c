#include "config.h"
#include "lref.h"
int main(void) { return 0; }
