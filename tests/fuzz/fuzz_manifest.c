/* fuzz_manifest.c: libFuzzer target for a checkpoint's manifest (the
 * file DIR/run that `drift sample --resume DIR` reads): its first line,
 * its checksum line, its directory and file lines, and the lines of the
 * run's spec (model, data, sampler, option) with their escapes, parsed
 * in memory by ckpt_parse (nothing is loaded, run or
 * written).  The input's first byte chooses the form: even, the rest as
 * it is (almost always refused at the checksum); odd, the rest with its
 * checksum line made right, so that the lines behind it are reached.  A
 * manifest that parses is written again as drift writes one and must
 * parse back to the same spec.  Built by `make fuzz`; seeds in
 * corpus/manifest. */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/resume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t k = 0; k < n; k++) {
        h ^= (unsigned char)p[k];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* text (n bytes) without a last "sum " line, with one over it. */
static char *with_sum(const char *text, size_t n, size_t *out_n)
{
    size_t keep = n;
    if (keep && text[keep - 1] == '\n') {
        size_t b = keep - 1;
        while (b > 0 && text[b - 1] != '\n')
            b--;
        if (keep - b >= 4 && !memcmp(text + b, "sum ", 4))
            keep = b;
    }
    char *out = malloc(keep + 32);
    if (!out)
        abort();
    memcpy(out, text, keep);
    if (keep && out[keep - 1] != '\n')
        out[keep++] = '\n';
    int m = snprintf(out + keep, 32, "sum %016" PRIx64 "\n", fnv(out, keep));
    *out_n = keep + (size_t)m;
    return out;
}

static void put_escaped(FILE *f, const char *key, const char *a)
{
    fputs(key, f);
    for (; *a; a++) {
        if (*a == '\\')
            fputs("\\\\", f);
        else if (*a == '\n')
            fputs("\\n", f);
        else
            fputc(*a, f);
    }
    fputc('\n', f);
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The spec written again as ckpt_start writes it, parsed back. */
static void round_trip(const ckpt_command *cmd, const char *cwd)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        abort();
    fputs("drift checkpoint 2\n", f);
    put_escaped(f, "cwd ", cwd);
    for (size_t k = 0; k < cmd->n_files; k++)
        fprintf(f, "%s\n", cmd->files[k]);
    if (cmd->model)
        put_escaped(f, "model ", cmd->model);
    for (size_t k = 0; k < cmd->n_data; k++)
        put_escaped(f, "data ", cmd->data[k]);
    if (cmd->sampler)
        put_escaped(f, "sampler ", cmd->sampler);
    for (size_t k = 0; k < cmd->n_opts; k++) {
        char key[96];
        snprintf(key, sizeof key, "option %s%s", cmd->opts[k].name,
                 cmd->opts[k].value ? " " : "");
        put_escaped(f, key, cmd->opts[k].value ? cmd->opts[k].value : "");
    }
    fclose(f);
    size_t n;
    char *full = with_sum(text, len, &n);
    free(text);
    ckpt_command again;
    char cwd2[4096], why[200];
    if (ckpt_parse(full, n, &again, cwd2, sizeof cwd2, why, sizeof why))
        abort();
    if (strcmp(cwd, cwd2) || again.n_data != cmd->n_data ||
        again.n_opts != cmd->n_opts || again.n_files != cmd->n_files ||
        !same(again.model, cmd->model) || !same(again.sampler, cmd->sampler))
        abort();
    for (size_t k = 0; k < cmd->n_data; k++)
        if (strcmp(again.data[k], cmd->data[k]))
            abort();
    for (size_t k = 0; k < cmd->n_opts; k++)
        if (strcmp(again.opts[k].name, cmd->opts[k].name) ||
            !same(again.opts[k].value, cmd->opts[k].value))
            abort();
    for (size_t k = 0; k < cmd->n_files; k++)
        if (strcmp(again.files[k], cmd->files[k]))
            abort();
    ckpt_command_free(&again);
    free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    char *fixed = NULL;
    if (data[0] & 1)
        text = fixed = with_sum(text, n, &n);
    ckpt_command cmd;
    char cwd[4096], why[200];
    int rc = ckpt_parse(text, n, &cmd, cwd, sizeof cwd, why, sizeof why);
    if (rc == 0) {
        /* What the resumed run relies on. */
        if (cwd[0] != '/' || !cmd.model)
            abort();
        for (size_t k = 0; k < cmd.n_opts; k++)
            if (!cmd.opts[k].name[0] || strchr(cmd.opts[k].name, ' '))
                abort();
        for (size_t k = 0; k < cmd.n_files; k++)
            if (strncmp(cmd.files[k], "file ", 5) ||
                !strchr(cmd.files[k], '\t') || strchr(cmd.files[k], '\n'))
                abort();
        round_trip(&cmd, cwd);
        ckpt_command_free(&cmd);
    } else if (rc != EXIT_USAGE && rc != EXIT_RUN_FAILED) {
        abort();
    } else if (!why[0] || cmd.model || cmd.sampler || cmd.data ||
               cmd.opts || cmd.files) {
        abort();
    }
    free(fixed);
    return 0;
}
