/*
 * routes.c -- fuzz target: a routing file through sy_routes_add_file (the
 * library's parse, then our checks of keys, types, patterns and the
 * default), shadowing, and resolving.
 *
 * Input: the file's text.  Properties: a rule kept has a compiled pattern
 * and a target; resolving a rule's own pattern as a namespace picks a rule
 * at or before it; every namespace gets an executor.
 */
#include "fuzz.h"

#include <string.h>

#include "config/routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sy_fuzz_reads_outside(data, size))
        return 0;
    const char *path = sy_fuzz_write("routes.cfg", data, size);
    sy_routes r;
    sy_diags d;
    sy_routes_init(&r);
    sy_diags_init(&d);
    int errors = sy_routes_add_file(&r, path, &d);
    SY_FUZZ_CHECK((size_t)errors == d.errors, "%d errors returned, %zu "
                  "reported", errors, d.errors);
    sy_routes_check_shadowing(&r, &d);
    for (size_t i = 0; i < r.n; i++) {
        const sy_route_rule *rule = &r.rules[i];
        SY_FUZZ_CHECK(rule->glob.nseg > 0 && rule->executor && rule->file,
                      "rule %zu kept half-made", i);
        const char *executor = NULL;
        size_t tried = 0;
        const sy_route_rule *won = sy_routes_resolve(&r, rule->glob.source,
                                                     &executor, &tried);
        SY_FUZZ_CHECK(executor && tried <= r.n, "resolve lost its way");
        char why[256];
        /* A literal pattern is a namespace that its own rule matches. */
        if (sy_ns_validate(rule->glob.source, why, sizeof why) == 0 &&
            !strpbrk(rule->glob.source, "*?[\\"))
            SY_FUZZ_CHECK(won && won <= rule, "rule %zu \"%s\" does not "
                          "match its own text", i, rule->glob.source);
    }
    sy_fuzz_render(&d);
    sy_routes_free(&r);
    sy_diags_free(&d);
    return 0;
}
