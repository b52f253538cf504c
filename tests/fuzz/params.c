/*
 * params.c -- fuzz target: a settings group checked against a plugin's
 * parameter declarations (sy_params_check: unknown keys, required keys,
 * types, durations), converted to the JSON the host keeps, and read back
 * through the typed getters plugins use (sdk/param_read.c).
 *
 * Input: the first line declares the parameters, words NAME:T where T is
 * s string, i int, f float, b bool, a array, g group, d duration, and a
 * trailing `!` makes one required (at most 8, a repeated name ignored);
 * the rest is the group in libconfig syntax.  Properties: a group that passes the check converts,
 * and each declared parameter present reads as its type with SY_OK.
 */
#include "fuzz.h"

#include <math.h>
#include <string.h>

#include <switchyard/config_json.h>
#include <switchyard/json_params.h>
#include <switchyard/sdk.h>

#include "base/diagnostics.h"
#include "config/params.h"
#include "executor/host_api.h"

#define MAX_SPEC 8

typedef struct spec_set {
    sy_param_spec v[MAX_SPEC];
    const sy_param_spec *ptr[MAX_SPEC + 1];
    char names[MAX_SPEC][32];
    size_t n;
} spec_set;

static sy_param_type type_of(char c)
{
    switch (c) {
    case 's': return SY_PARAM_STRING;
    case 'i': return SY_PARAM_INT;
    case 'f': return SY_PARAM_FLOAT;
    case 'b': return SY_PARAM_BOOL;
    case 'a': return SY_PARAM_ARRAY;
    case 'g': return SY_PARAM_GROUP;
    case 'd': return SY_PARAM_DURATION;
    default: return SY_PARAM_NONE;
    }
}

static void read_spec(spec_set *s, char *line)
{
    char *save = NULL;
    s->n = 0;
    for (char *w = strtok_r(line, " \t", &save); w && s->n < MAX_SPEC;
         w = strtok_r(NULL, " \t", &save)) {
        char *colon = strrchr(w, ':');
        if (!colon || colon == w || (size_t)(colon - w) >= sizeof s->names[0])
            continue;
        sy_param_type t = type_of(colon[1]);
        if (t == SY_PARAM_NONE)
            continue;
        memcpy(s->names[s->n], w, (size_t)(colon - w));
        s->names[s->n][colon - w] = '\0';
        /* The check goes by the first declaration of a name; a plugin
         * declaring one twice is the descriptor's problem, not this. */
        bool again = false;
        for (size_t k = 0; k < s->n && !again; k++)
            again = strcmp(s->names[k], s->names[s->n]) == 0;
        if (again)
            continue;
        s->v[s->n] = (sy_param_spec){
            .size = sizeof(sy_param_spec),
            .flags = colon[2] == '!' ? SY_PARAM_REQUIRED : 0,
            .name = s->names[s->n],
            .type = t,
        };
        s->ptr[s->n] = &s->v[s->n];
        s->n++;
    }
    s->ptr[s->n] = NULL;
}

/* Reads one declared parameter the way a plugin would; SY_OK expected
 * when the check passed and the key is present. */
static int read_param(const sy_params *p, const sy_param_spec *spec)
{
    const sy_host_api *api = &sy_host_api_table;
    char err[256];
    int64_t i;
    double f;
    bool b;
    const char *s;
    size_t n;
    const sy_params *g;
    switch (spec->type) {
    case SY_PARAM_STRING:
        return sy_sdk_param_string(api, p, spec->name, NULL, &s, err, sizeof err);
    case SY_PARAM_INT:
        return sy_sdk_param_int(api, p, spec->name, 0, INT64_MIN, INT64_MAX,
                                &i, err, sizeof err);
    case SY_PARAM_FLOAT:
        return sy_sdk_param_float(api, p, spec->name, 0, -HUGE_VAL, HUGE_VAL,
                                  &f, err, sizeof err);
    case SY_PARAM_BOOL:
        return sy_sdk_param_bool(api, p, spec->name, false, &b, err, sizeof err);
    case SY_PARAM_DURATION:
        return sy_sdk_param_duration_ms(api, p, spec->name, 0, 0, INT64_MAX,
                                        &i, err, sizeof err);
    case SY_PARAM_ARRAY:
        if (api->param_type(p, spec->name) == SY_PARAM_NONE)
            return SY_OK;
        return api->param_array_len(p, spec->name, &n);
    default:
        if (api->param_type(p, spec->name) == SY_PARAM_NONE)
            return SY_OK;
        return api->param_group(p, spec->name, &g);
    }
}

/* Walks every getter over the view, declared or not: none may crash. */
static void read_everything(const sy_params *p)
{
    const sy_host_api *api = &sy_host_api_table;
    for (size_t k = 0; k < api->param_count(p); k++) {
        const char *name = api->param_name(p, k);
        SY_FUZZ_CHECK(name != NULL, "key %zu has no name", k);
        size_t len = 0;
        const char *s;
        int64_t i;
        api->param_type(p, name);
        if (api->param_array_len(p, name, &len) == SY_OK)
            for (size_t e = 0; e < len && e < 64; e++) {
                api->param_array_string(p, name, e, &s);
                api->param_array_int(p, name, e, &i);
            }
        api->param_duration_ms(p, name, &i);
    }
    char *json = api->param_json(p);
    SY_FUZZ_CHECK(json != NULL, "no JSON for the view");
    api->free_string(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* With no include directory libconfig would open the name as written. */
    if (memmem(data, size, "@include", 8))
        return 0;
    const uint8_t *first, *body;
    size_t first_n, body_n;
    sy_fuzz_split(data, size, '\n', &first, &first_n, &body, &body_n);
    char *line = sy_fuzz_str(first, first_n);
    char *text = sy_fuzz_str(body, body_n);
    spec_set spec;
    read_spec(&spec, line);
    config_t lc;
    config_init(&lc);
    if (config_read_string(&lc, text) == CONFIG_TRUE) {
        const config_setting_t *root = config_root_setting(&lc);
        sy_diags d;
        sy_diags_init(&d);
        int errors = sy_params_check(root, NULL, spec.ptr, "fuzz", &d);
        SY_FUZZ_CHECK((size_t)errors == d.errors, "%d errors, %zu reported",
                      errors, d.errors);
        sy_fuzz_render(&d);
        json_t *obj = sy_sdk_json_from_setting(root, NULL);
        SY_FUZZ_CHECK(obj || errors, "a group that passed does not convert");
        if (obj) {
            const sy_params *p = sy_sdk_params_view(obj);
            for (size_t k = 0; k < spec.n; k++) {
                int rc = read_param(p, &spec.v[k]);
                SY_FUZZ_CHECK(errors || rc == SY_OK,
                              "\"%s\" passed the check but reads as %d",
                              spec.v[k].name, rc);
            }
            read_everything(p);
            json_decref(obj);
        }
        sy_diags_free(&d);
    }
    config_destroy(&lc);
    free(line);
    free(text);
    return 0;
}
