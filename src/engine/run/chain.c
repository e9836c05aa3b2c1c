/* chain.c: the state one chain carries through a run and the small
 * services every part of a run uses on it: recording a failure, naming a
 * coordinate, naming the chain's file.  Not for running chains (run.c) nor
 * for the services table samplers see (oracle.c). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "chain.h"

int drift_chain_fail(drift_chain *c, int code, const char *fmt, ...)
{
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->message, sizeof c->message, fmt, ap);
        va_end(ap);
        c->failed = code ? code : DRIFT_EINTERNAL;
    }
    return code;
}

void drift_chain_path(const char *out_path, unsigned chains, unsigned id,
                      char *buf, size_t cap)
{
    if (chains <= 1) {
        snprintf(buf, cap, "%s", out_path);
        return;
    }
    const char *slash = strrchr(out_path, '/');
    const char *dot = strrchr(out_path, '.');
    if (dot && (!slash || dot > slash + 1))
        snprintf(buf, cap, "%.*s_%u%s", (int)(dot - out_path), out_path, id,
                 dot);
    else
        snprintf(buf, cap, "%s_%u", out_path, id);
}

void drift_chain_param_name(const drift_chain *c, size_t k, char *buf, size_t cap)
{
    drift_model_param_name(c->model, k, buf, cap);
}

void drift_model_param_name(const drift_model *m, size_t k, char *buf,
                            size_t cap)
{
    if (m->theta_names)
        snprintf(buf, cap, "%s", m->theta_names[k]);
    else if (m->n_out == m->dim && m->out_names)
        snprintf(buf, cap, "%s", m->out_names[k]);
    else
        snprintf(buf, cap, "unconstrained coordinate %zu", k + 1);
}

void drift_chain_where(const drift_chain *c, char *buf, size_t cap)
{
    if (c->phase == DRIFT_CHAIN_SETUP)
        snprintf(buf, cap, "chain %u, setup", c->id);
    else if (c->phase == DRIFT_CHAIN_MODE)
        snprintf(buf, cap, "chain %u, mode search", c->id);
    else if (c->phase == DRIFT_CHAIN_INIT)
        snprintf(buf, cap, "chain %u, init", c->id);
    else
        snprintf(buf, cap, "chain %u, iteration %llu", c->id,
                 (unsigned long long)c->iter);
}

int drift_chain_column_is_vector(const char *name)
{
    size_t len = strlen(name);
    return len > 4 && strcmp(name + len - 4, ".#__") == 0;
}

size_t drift_chain_n_diag(const drift_sampler *s, size_t d)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n_columns; k++)
        n += drift_chain_column_is_vector(s->columns[k]) ? d : 1;
    return n;
}
