/*
 * The quickstart's task library: `transform` reads the rows that `extract`
 * produced from its input context and summarises them.  Built by `make`
 * into lib/libquickstart.so; it links only jansson, never Switchyard.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/task.h>

SY_TASK_LIBRARY;

SY_TASK_EXPORT int transform(const sy_task_api *api, sy_task_ctx *ctx);

SY_TASK_EXPORT int transform(const sy_task_api *api, sy_task_ctx *ctx)
{
    size_t len;
    const char *in = api->input(ctx, &len);
    json_error_t je;
    json_t *input = json_loadb(in, len, 0, &je);
    json_t *rows = input ? json_object_get(input, "rows") : NULL;
    if (!json_is_array(rows)) {
        api->set_error(ctx, "transform: the input has no \"rows\" array (did extract run?)");
        json_decref(input);
        return 1;
    }
    double total = 0;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        json_t *amount = json_object_get(row, "amount");
        if (!json_is_number(amount)) {
            api->set_error(ctx, "transform: row %zu has no numeric \"amount\"", i);
            json_decref(input);
            return 1;
        }
        total += json_number_value(amount);
    }
    json_t *out = json_pack("{s:{s:I, s:f}}", "summary", "rows",
                            (json_int_t)json_array_size(rows), "total", total);
    char *text = json_dumps(out, JSON_COMPACT);
    api->set_output(ctx, text, strlen(text));
    api->log(ctx, SY_LOG_INFO, "summarised %zu rows", json_array_size(rows));
    free(text);
    json_decref(out);
    json_decref(input);
    return 0;
}
