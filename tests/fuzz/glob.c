/*
 * glob.c -- fuzz target: glob patterns, namespace validation, matching and
 * subsumption (config/glob.h).
 *
 * Input: lines.  The first two are patterns A and B, the rest namespaces.
 * Properties: a pattern that fails to compile says why and leaves the glob
 * zeroed; a namespace sy_ns_validate refuses matches nothing; when A
 * subsumes B (the shadowing warning), every namespace B matches A
 * matches too; every pattern subsumes itself.
 */
#include "fuzz.h"

#include <string.h>

#include "config/glob.h"

static bool compile(sy_glob *g, const char *text)
{
    char err[256] = "";
    if (sy_glob_compile(g, text, err, sizeof err) == 0)
        return true;
    SY_FUZZ_CHECK(err[0] != '\0', "pattern \"%s\" refused without a reason",
                  text);
    SY_FUZZ_CHECK(!g->seg && !g->source && g->nseg == 0,
                  "refused pattern \"%s\" left state behind", text);
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = sy_fuzz_str(data, size);
    char *save = NULL;
    char *pa = strtok_r(text, "\n", &save);
    char *pb = pa ? strtok_r(NULL, "\n", &save) : NULL;
    sy_glob a, b;
    bool ok_a = compile(&a, pa ? pa : "");
    bool ok_b = compile(&b, pb ? pb : "");
    bool a_over_b = ok_a && ok_b && sy_glob_subsumes(&a, &b);
    if (ok_a)
        SY_FUZZ_CHECK(sy_glob_subsumes(&a, &a), "\"%s\" does not subsume "
                      "itself", pa);
    for (char *ns; (ns = strtok_r(NULL, "\n", &save));) {
        char err[256] = "";
        bool valid = sy_ns_validate(ns, err, sizeof err) == 0;
        SY_FUZZ_CHECK(valid || err[0], "namespace refused without a reason");
        bool in_a = ok_a && sy_glob_match(&a, ns);
        bool in_b = ok_b && sy_glob_match(&b, ns);
        SY_FUZZ_CHECK(valid || (!in_a && !in_b),
                      "invalid namespace \"%s\" matched", ns);
        SY_FUZZ_CHECK(!a_over_b || !in_b || in_a,
                      "\"%s\" subsumes \"%s\" but only the second matches "
                      "\"%s\"", pa, pb, ns);
    }
    sy_glob_free(&a);
    sy_glob_free(&b);
    free(text);
    return 0;
}
