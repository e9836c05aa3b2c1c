/* replay.c: runs a fuzz target's input function over every file of its
 * regression directory, tests/fuzz/regressions/FUZZ_NAME (inputs that
 * once crashed, hung or leaked), so make check keeps them fixed; under
 * --enable-sanitizers the sanitizers watch them too.  Linked with one
 * fuzz_*.c file; not a fuzzer. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(void)
{
    const char *src = getenv("srcdir");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", src ? src : ".",
             FUZZ_NAME);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        return 1;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            fprintf(stderr, "replay: cannot open %s\n", path);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
        size_t got = fread(buf, 1, (size_t)(len > 0 ? len : 0), f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, got);
        free(buf);
        printf("replayed %s\n", e->d_name);
        n++;
    }
    closedir(d);
    printf("%d %s regression inputs replayed\n", n, FUZZ_NAME);
    return 0;
}
