/*
 * context.c -- fuzz target: task outputs parsed (sy_output_parse) and
 * merged into a context, two ways that must agree: sy_json_merge, one
 * output after another, and context trees (context_tree.h), the form the
 * engine dispatches from.
 *
 * Input: up to 16 lines, each a task's output (a JSON object, or anything
 * else, which sy_output_parse must refuse with a reason).  Properties:
 * after each merge every key of the output holds its value (objects
 * merged recursively), every other key is untouched, and the chain of
 * trees gives the same JSON as the sequential merge.
 */
#include "fuzz.h"

#include <string.h>

#include "workflow/context.h"
#include "workflow/context_tree.h"

#define MAX_OUTPUT 65536

/* What sy_json_merge(after, src) must have made of `before`. */
static void check_merged(const json_t *before, const json_t *src,
                         const json_t *after)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)before, key, v) {
        if (!json_object_get(src, key))
            SY_FUZZ_CHECK(json_equal(v, json_object_get(after, key)),
                          "key \"%s\" changed by a merge that lacks it", key);
    }
    json_object_foreach((json_t *)src, key, v) {
        json_t *old = json_object_get(before, key);
        json_t *now = json_object_get(after, key);
        if (json_is_object(old) && json_is_object(v))
            check_merged(old, v, now);
        else
            SY_FUZZ_CHECK(json_equal(v, now), "key \"%s\" not replaced", key);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *ctx = json_object();
    sy_context_tree *tree = NULL;
    uint32_t pos = 0;
    const uint8_t *rest = data;
    size_t left = size;
    for (int line = 0; line < 16 && ctx; line++) {
        const uint8_t *text;
        size_t n;
        sy_fuzz_split(rest, left, '\n', &text, &n, &rest, &left);
        char err[512] = "";
        json_t *out = sy_output_parse((const char *)text, n, MAX_OUTPUT, err,
                                      sizeof err);
        SY_FUZZ_CHECK(out || err[0], "output refused without a reason");
        SY_FUZZ_CHECK(!out || json_is_object(out), "output not an object");
        if (out) {
            json_t *before = json_deep_copy(ctx);
            if (!before || sy_json_merge(ctx, out) != 0)
                abort();
            check_merged(before, out, ctx);
            json_decref(before);
            sy_context_tree *one = sy_context_tree_from_object(out, ++pos);
            sy_context_tree *merged = sy_context_tree_merge(tree, one);
            if (!one || !merged)
                abort();
            sy_context_tree_unref(tree);
            sy_context_tree_unref(one);
            tree = merged;
            json_decref(out);
        }
        if (left == 0)
            break;
    }
    json_t *from_tree = sy_context_tree_json(tree);
    SY_FUZZ_CHECK(from_tree && json_equal(from_tree, ctx),
                  "the context tree and the sequential merge disagree");
    json_decref(from_tree);
    sy_context_tree_unref(tree);
    json_decref(ctx);
    return 0;
}
