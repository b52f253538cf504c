/*
 * check_load.c -- the plugin passes the host's loading checks, and its
 * descriptor says what it means: sizes, name, version, declarations.
 */
#include "checks.h"

#include <stdio.h>
#include <string.h>

kit_verdict kit_check_load(kit_ctx *x, kit_report *r)
{
    const sy_sdk_plugin *p = &x->plugin;
    if (!p->desc)
        return kit_fail(r, "the host refuses it: %s",
                        x->reason[0] ? x->reason : "(no reason)");
    return kit_pass(r, "%s %s, executor ABI %u.%u", p->name, p->version,
                    (unsigned)p->abi_major, (unsigned)p->abi_minor);
}

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

static bool one_line(const char *s)
{
    return s && !strpbrk(s, "\n\r");
}

/* A key libconfig can spell: a letter or '*', then letters, digits, '-',
 * '_' or '*'.  Anything else could never be set in a config file. */
static bool key_ok(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                *s == '*'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
              *s == '*'))
            return false;
    return true;
}

/* Checks one declaration list.  Returns the number of entries, or -1 with
 * r failed. */
static int check_specs(const sy_param_spec *const *v, const char *list,
                       bool instance, kit_report *r)
{
    if (!v)
        return 0;
    int n = 0;
    for (; v[n]; n++) {
        const sy_param_spec *sp = v[n];
        if (n >= 256) {
            kit_fail(r, "%s has more than 256 entries: is it NULL-terminated?",
                     list);
            return -1;
        }
        if (!SY_HAS_FIELD(sp, sy_param_spec, description)) {
            kit_fail(r, "%s[%d]: size %u is smaller than a 1.0 sy_param_spec "
                     "(%zu bytes)", list, n, (unsigned)sp->size,
                     sizeof(sy_param_spec));
            return -1;
        }
        if (sp->size > KIT_MAX_STRUCT_SIZE ||
            sp->size % _Alignof(sy_param_spec) != 0) {
            kit_fail(r, "%s[%d]: size %u is not the size of any "
                     "sy_param_spec layout (%zu in this header): set it to "
                     "sizeof(sy_param_spec)", list, n, (unsigned)sp->size,
                     sizeof(sy_param_spec));
            return -1;
        }
        if (!key_ok(sp->name)) {
            kit_fail(r, "%s[%d]: name %s%s%s is not a key a config file can "
                     "spell (a letter, then letters, digits, '-' or '_')",
                     list, n, sp->name ? "\"" : "",
                     sp->name ? sp->name : "NULL", sp->name ? "\"" : "");
            return -1;
        }
        if (sp->type < SY_PARAM_STRING || sp->type > SY_PARAM_DURATION) {
            kit_fail(r, "%s: '%s' has type %d, not a declarable "
                     "sy_param_type (STRING to DURATION)", list, sp->name,
                     (int)sp->type);
            return -1;
        }
        if (sp->flags & ~SY_PARAM_REQUIRED) {
            kit_fail(r, "%s: '%s' has unknown flags 0x%x", list, sp->name,
                     (unsigned)(sp->flags & ~SY_PARAM_REQUIRED));
            return -1;
        }
        if (sp->description && !one_line(sp->description)) {
            kit_fail(r, "%s: '%s' has a description of more than one line",
                     list, sp->name);
            return -1;
        }
        if (instance && strcmp(sp->name, "plugin") == 0) {
            kit_fail(r, "%s declares 'plugin', which the host reserves for "
                     "the plugin's name", list);
            return -1;
        }
        for (int j = 0; j < n; j++)
            if (strcmp(v[j]->name, sp->name) == 0) {
                kit_fail(r, "%s declares '%s' twice", list, sp->name);
                return -1;
            }
    }
    return n;
}

/* SY_EXECUTOR_V1 sets size to sizeof(sy_executor) of the header the
 * plugin was built with: this header's, an older 1.x header's (smaller,
 * but never below 1.0's, which the loader enforces) or a newer one's
 * (larger, with fields past this layout left zero, which the loader
 * enforces too).  Any size is a whole number of fields, so one that is not
 * a multiple of the struct's alignment was written by hand. */
static bool size_ok(const sy_executor *d, kit_report *r)
{
    if (d->size % _Alignof(sy_executor) != 0) {
        kit_fail(r, "size is %u, not a whole sy_executor layout (a multiple "
                 "of %zu bytes): start the descriptor with SY_EXECUTOR_V1",
                 (unsigned)d->size, _Alignof(sy_executor));
        return false;
    }
    if (d->size > sizeof(sy_executor))
        kit_note(r, "size %u: built against a newer 1.x header than this "
                 "kit's (%zu bytes); fields past those are not checked",
                 (unsigned)d->size, sizeof(sy_executor));
    return true;
}

static bool texts_ok(const sy_executor *d, kit_report *r)
{
    if (!*d->version || !one_line(d->version)) {
        kit_fail(r, "version must be one non-empty line");
        return false;
    }
    if (d->description && !one_line(d->description)) {
        kit_fail(r, "description must be one line (or NULL)");
        return false;
    }
    return true;
}

kit_verdict kit_check_descriptor(kit_ctx *x, kit_report *r)
{
    const sy_executor *d = x->d;
    if (!size_ok(d, r) || !texts_ok(d, r))
        return KIT_FAIL;
    int ni = check_specs(d->instance_params, "instance_params", true, r);
    if (ni < 0)
        return KIT_FAIL;
    int nt = check_specs(d->task_params, "task_params", false, r);
    if (nt < 0)
        return KIT_FAIL;
    if (!d->description)
        kit_note(r, "no description: `switchyard plugins` will show none");
    kit_note(r, "instance settings: %s%d declared; task parameters: %s%d "
             "declared", d->instance_params ? "" : "none (create() judges) ",
             ni, d->task_params ? "" : "any accepted, ", nt);
    kit_note(r, "validate(): %s; metrics(): %s",
             d->validate ? "yes" : "no", d->metrics ? "yes" : "no");
    return kit_pass(r, "%u bytes, %d instance setting%s, %d task "
                    "parameter%s declared",
                    (unsigned)d->size, ni, ni == 1 ? "" : "s", nt,
                    nt == 1 ? "" : "s");
}
