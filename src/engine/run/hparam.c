/* hparam.c: hyperparameter tables: checking the tables plugins declare and
 * parsing the values users set, with messages that name the option, the
 * plugin and the accepted range.  Not for engine options (the CLI). */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "hparam.h"

static int is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* Number of choices of an enum ("a|b|c" -> 3), 0 when malformed. */
static size_t n_choices(const char *choices)
{
    if (!choices || !*choices)
        return 0;
    size_t n = 1;
    for (const char *p = choices; *p; p++)
        if (*p == '|') {
            if (p[1] == '|' || p[1] == '\0' || p == choices)
                return 0;
            n++;
        }
    return n;
}

/* Index of value among choices, or -1. */
static long choice_index(const char *choices, const char *value)
{
    size_t len = strlen(value);
    long k = 0;
    const char *p = choices;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0)
            return k;
        if (!bar)
            return -1;
        p = bar + 1;
        k++;
    }
}

static int inside(const drift_hparam *h, double v)
{
    if (isnan(v))
        return 0;
    if ((h->flags & DRIFT_HP_OPEN_LO) ? !(v > h->lo) : !(v >= h->lo))
        return 0;
    if ((h->flags & DRIFT_HP_OPEN_HI) ? !(v < h->hi) : !(v <= h->hi))
        return 0;
    return 1;
}

const char *drift_hparam_type_name(const drift_hparam *h)
{
    switch (h->type) {
    case DRIFT_HP_REAL: return "real";
    case DRIFT_HP_INT: return "int";
    case DRIFT_HP_ENUM: return "enum";
    case DRIFT_HP_BOOL: return "bool";
    }
    return "?";
}

static void fmt_bound(double v, char *buf, size_t cap)
{
    if (isinf(v))
        snprintf(buf, cap, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, cap, "%.10g", v);
}

void drift_hparam_range(const drift_hparam *h, char *buf, size_t cap)
{
    char lo[32], hi[32];
    switch (h->type) {
    case DRIFT_HP_ENUM:
        snprintf(buf, cap, "%s", h->choices ? h->choices : "");
        return;
    case DRIFT_HP_BOOL:
        snprintf(buf, cap, "true|false");
        return;
    default:
        fmt_bound(h->lo, lo, sizeof lo);
        fmt_bound(h->hi, hi, sizeof hi);
        snprintf(buf, cap, "%c%s, %s%c%s",
                 (h->flags & DRIFT_HP_OPEN_LO) || isinf(h->lo) ? '(' : '[',
                 lo, hi,
                 (h->flags & DRIFT_HP_OPEN_HI) || isinf(h->hi) ? ')' : ']',
                 (h->flags & DRIFT_HP_STEP_SIZE) ? " or auto" : "");
    }
}

void drift_hparam_format(const drift_hparam *h, double v, char *buf,
                         size_t cap)
{
    if (isnan(v)) {
        snprintf(buf, cap, "auto");
        return;
    }
    switch (h->type) {
    case DRIFT_HP_ENUM: {
        const char *p = h->choices;
        for (long k = 0; k < (long)v && p; k++) {
            p = strchr(p, '|');
            if (p)
                p++;
        }
        size_t n = p ? strcspn(p, "|") : 0;
        snprintf(buf, cap, "%.*s", (int)n, p ? p : "");
        return;
    }
    case DRIFT_HP_BOOL:
        snprintf(buf, cap, "%s", v != 0 ? "true" : "false");
        return;
    case DRIFT_HP_INT:
        snprintf(buf, cap, "%.0f", v);
        return;
    case DRIFT_HP_REAL:
        snprintf(buf, cap, "%.10g", v);
        return;
    }
}

int drift_hparams_check(const drift_hparam *t, size_t n, const char *who,
                        drift_err *e)
{
    if (n && !t)
        return drift_err_set(e, DRIFT_EPLUGIN,
                             "%s: declares %zu hyperparameters but no table",
                             who, n);
    for (size_t k = 0; k < n; k++) {
        const drift_hparam *h = &t[k];
        if (!is_identifier(h->name))
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: hyperparameter %zu has an invalid name "
                                 "'%s' (expected an identifier)",
                                 who, k + 1, h->name ? h->name : "(null)");
        for (size_t j = 0; j < k; j++)
            if (strcmp(t[j].name, h->name) == 0)
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: hyperparameter '%s' is declared "
                                     "twice (entries %zu and %zu)",
                                     who, h->name, j + 1, k + 1);
        if (strcmp(h->name, "batch") == 0 || strcmp(h->name, "seed") == 0)
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: hyperparameter name '%s' is reserved "
                                 "for the engine's option --%s",
                                 who, h->name, h->name);
        switch (h->type) {
        case DRIFT_HP_REAL:
        case DRIFT_HP_INT:
            if (isnan(h->lo) || isnan(h->hi) || h->lo > h->hi)
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: hyperparameter '%s' has invalid "
                                     "bounds",
                                     who, h->name);
            if (!isnan(h->def) && !inside(h, h->def)) {
                char range[96];
                drift_hparam_range(h, range, sizeof range);
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: hyperparameter '%s' has default "
                                     "%.10g outside its bounds %s",
                                     who, h->name, h->def, range);
            }
            if (h->type == DRIFT_HP_INT && !isnan(h->def) &&
                h->def != floor(h->def))
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: integer hyperparameter '%s' has "
                                     "non-integer default %.10g",
                                     who, h->name, h->def);
            break;
        case DRIFT_HP_ENUM: {
            size_t m = n_choices(h->choices);
            if (m == 0)
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: enum hyperparameter '%s' has no "
                                     "valid choices (expected \"a|b|c\")",
                                     who, h->name);
            if (!(h->def >= 0 && h->def < (double)m && h->def == floor(h->def)))
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: enum hyperparameter '%s' has "
                                     "default index %g outside 0..%zu",
                                     who, h->name, h->def, m - 1);
            break;
        }
        case DRIFT_HP_BOOL:
            if (!(h->def == 0 || h->def == 1))
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: bool hyperparameter '%s' has "
                                     "default %g (expected 0 or 1)",
                                     who, h->name, h->def);
            break;
        default:
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: hyperparameter '%s' has unknown type "
                                 "%d",
                                 who, h->name, (int)h->type);
        }
        if (h->flags & DRIFT_HP_STEP_SIZE) {
            if (h->type != DRIFT_HP_REAL || isnan(h->def) || !(h->def > 0) ||
                isinf(h->def))
                return drift_err_set(e, DRIFT_EPLUGIN,
                                     "%s: hyperparameter '%s' is flagged as "
                                     "the step size (DRIFT_HP_STEP_SIZE) but "
                                     "is not a real with a positive finite "
                                     "default (the pilot's first trial)",
                                     who, h->name);
            for (size_t j = 0; j < k; j++)
                if (t[j].flags & DRIFT_HP_STEP_SIZE)
                    return drift_err_set(e, DRIFT_EPLUGIN,
                                         "%s: hyperparameters '%s' and '%s' "
                                         "are both flagged as the step size "
                                         "(DRIFT_HP_STEP_SIZE); at most one "
                                         "may be",
                                         who, t[j].name, h->name);
        }
        if (!h->doc)
            return drift_err_set(e, DRIFT_EPLUGIN,
                                 "%s: hyperparameter '%s' has no "
                                 "documentation string",
                                 who, h->name);
    }
    return DRIFT_OK;
}

long drift_hparams_step_size(const drift_hparam *t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (t[k].flags & DRIFT_HP_STEP_SIZE)
            return (long)k;
    return -1;
}

long drift_hparams_find(const drift_hparam *t, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(t[k].name, name) == 0)
            return (long)k;
    return -1;
}

static int parse_value(const drift_hparam *h, const char *s, double *out)
{
    switch (h->type) {
    case DRIFT_HP_REAL:
        return drift_parse_double(s, out);
    case DRIFT_HP_INT: {
        double v;
        if (drift_parse_double(s, &v) || v != floor(v))
            return -1;
        *out = v;
        return 0;
    }
    case DRIFT_HP_ENUM: {
        long k = choice_index(h->choices, s);
        if (k < 0)
            return -1;
        *out = (double)k;
        return 0;
    }
    case DRIFT_HP_BOOL:
        if (!strcmp(s, "true") || !strcmp(s, "1")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(s, "false") || !strcmp(s, "0")) {
            *out = 0;
            return 0;
        }
        return -1;
    }
    return -1;
}

int drift_hparams_apply(const drift_hparam *t, size_t n, const char *opt,
                        const char *who, char *const *settings,
                        size_t n_settings, double *vals,
                        unsigned char *was_set, drift_err *e)
{
    /* A step size the user does not set is chosen by the engine (NaN:
     * "auto", see DRIFT_HP_STEP_SIZE). */
    for (size_t k = 0; k < n; k++) {
        vals[k] = (t[k].flags & DRIFT_HP_STEP_SIZE) ? NAN : t[k].def;
        if (was_set)
            was_set[k] = 0;
    }
    for (size_t s = 0; s < n_settings; s++) {
        const char *eq = strchr(settings[s], '=');
        if (!eq || eq == settings[s])
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s %s: expected name=value", opt,
                                 settings[s]);
        char name[64];
        size_t len = (size_t)(eq - settings[s]);
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, settings[s], len);
        name[len] = '\0';
        long k = drift_hparams_find(t, n, name);
        if (k < 0) {
            char list[256] = "";
            size_t used = 0;
            const char *names[64];
            size_t m = n < 64 ? n : 64;
            for (size_t j = 0; j < m; j++) {
                names[j] = t[j].name;
                used += (size_t)snprintf(list + used,
                                         used < sizeof list ? sizeof list - used : 0,
                                         "%s%s", j ? ", " : "", t[j].name);
            }
            const char *near = drift_closest(name, names, m);
            char hint[96] = "";
            if (near)
                snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s %s: %s has no hyperparameter '%s'%s; "
                                 "it has: %s",
                                 opt, settings[s], who, name, hint,
                                 n ? list : "none");
        }
        const drift_hparam *h = &t[k];
        double v;
        char range[128];
        drift_hparam_range(h, range, sizeof range);
        int automatic = (h->flags & DRIFT_HP_STEP_SIZE) &&
                        !strcmp(eq + 1, "auto");
        if (automatic)
            v = NAN;
        else if (parse_value(h, eq + 1, &v))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s %s: '%s' is not a valid %s for '%s' of "
                                 "%s; expected %s",
                                 opt, settings[s], eq + 1,
                                 drift_hparam_type_name(h), h->name, who,
                                 range);
        if (!automatic &&
            (h->type == DRIFT_HP_REAL || h->type == DRIFT_HP_INT) &&
            !inside(h, v))
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s %s: value out of range; '%s' of %s "
                                 "accepts %s",
                                 opt, settings[s], h->name, who, range);
        if (was_set && was_set[k])
            return drift_err_set(e, DRIFT_EINVAL,
                                 "%s %s: '%s' is set twice", opt,
                                 settings[s], h->name);
        vals[k] = v;
        if (was_set)
            was_set[k] = 1;
    }
    return DRIFT_OK;
}
