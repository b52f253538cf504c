/*
 * config.c -- fuzz target: switchyard.cfg through sy_config_load, the
 * whole validation (keys, types, integers, instances, inline or file
 * routes, patterns, targets), then shadowing and routing on the result.
 *
 * Input: the file's text.  Beside it lie a small valid routes.cfg and
 * inc.cfg, so `routes = "routes.cfg"` and `@include "inc.cfg"` reach real
 * files.  Properties: a config that loads clean names only valid
 * instances, and every namespace routes to one of them.
 */
#include "fuzz.h"

#include <string.h>

#include "config/config.h"

static void write_neighbours(void)
{
    static bool done;
    if (done)
        return;
    static const char routes[] =
        "routes = {\n  default = \"default\";\n"
        "  rules = ( { match = \"*::ml::**\"; executor = \"default\"; } );\n"
        "};\n";
    static const char inc[] = "executors = { inc = { plugin = \"thread\"; }; };\n";
    sy_fuzz_write("routes.cfg", (const uint8_t *)routes, sizeof routes - 1);
    sy_fuzz_write("inc.cfg", (const uint8_t *)inc, sizeof inc - 1);
    done = true;
}

static void check_routing(const sy_config *cfg)
{
    static const char *const names[] = {
        "public::etl::load", "public::ml::train::fit", "a", "a::b::c::d::e",
    };
    for (size_t i = 0; i < cfg->routes.n + 4; i++) {
        const char *ns = i < cfg->routes.n ? cfg->routes.rules[i].glob.source
                                           : names[i - cfg->routes.n];
        const char *executor = NULL;
        size_t tried = 0;
        const sy_route_rule *r = sy_routes_resolve(&cfg->routes, ns,
                                                   &executor, &tried);
        SY_FUZZ_CHECK(executor != NULL, "no executor for \"%s\"", ns);
        SY_FUZZ_CHECK(tried <= cfg->routes.n, "tried %zu of %zu rules", tried,
                      cfg->routes.n);
        SY_FUZZ_CHECK(!r || r == &cfg->routes.rules[tried - 1],
                      "the winner is not the last rule tried");
        SY_FUZZ_CHECK(sy_config_instance(cfg, executor) != NULL,
                      "\"%s\" routes to unknown instance \"%s\"", ns, executor);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sy_fuzz_reads_outside(data, size))
        return 0;
    write_neighbours();
    const char *path = sy_fuzz_write("switchyard.cfg", data, size);
    sy_config cfg;
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_config_load(&cfg, path, &d);
    SY_FUZZ_CHECK((errors == 0) == (d.errors == 0),
                  "%d errors returned, %zu reported", errors, d.errors);
    if (errors == 0) {
        for (size_t i = 0; i < cfg.n_executors; i++)
            SY_FUZZ_CHECK(sy_name_valid(cfg.executors[i].name),
                          "instance \"%s\" loaded", cfg.executors[i].name);
        sy_routes_check_shadowing(&cfg.routes, &d);
        check_routing(&cfg);
    }
    sy_fuzz_render(&d);
    sy_config_free(&cfg);
    sy_diags_free(&d);
    return 0;
}
