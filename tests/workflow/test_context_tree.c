/* Context trees (host/workflow/context_tree.c) give exactly what merging
 * every ancestor's output in topological order gives (sy_json_merge, the
 * definition of a task's input), keys in the same order, on random DAGs
 * whose outputs overwrite, nest, replace objects by values and values by
 * objects; and they share what one side alone decides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workflow/context.h"
#include "workflow/context_tree.h"

static uint64_t seed = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (uint32_t)(seed % n);
}

/* Outputs over a small alphabet of keys, so that writes collide often.
 * With `stable` types, a key path always holds an object ("a" and "b"
 * above the deepest level) or never does ("c", "d"); without, any value
 * may replace any other. */
static bool stable;

static json_t *random_value(int depth, const char *key);

static json_t *random_object(int depth)
{
    static const char *const keys[] = {"a", "b", "c", "d"};
    json_t *o = json_object();
    size_t n = rnd(4);
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[rnd(4)];
        json_object_set_new(o, k, random_value(depth + 1, k));
    }
    return o;
}

static json_t *random_scalar(void)
{
    switch (rnd(4)) {
    case 0: return json_integer(rnd(100));
    case 1: return json_string(rnd(2) ? "x" : "y");
    case 2: return json_pack("[i]", (int)rnd(9));
    default: return rnd(2) ? json_null() : json_true();
    }
}

static json_t *random_value(int depth, const char *key)
{
    if (stable)
        return depth < 3 && key[0] < 'c' ? random_object(depth) : random_scalar();
    return depth < 3 && rnd(3) == 0 ? random_object(depth) : random_scalar();
}

typedef struct {
    size_t n;
    size_t **deps;
    size_t *n_deps;
    json_t **output;          /* NULL: no output */
    sy_context_tree **after;
} dag;

static void dag_random(dag *g, size_t n)
{
    g->n = n;
    g->deps = calloc(n, sizeof *g->deps);
    g->n_deps = calloc(n, sizeof *g->n_deps);
    g->output = calloc(n, sizeof *g->output);
    g->after = calloc(n, sizeof *g->after);
    for (size_t i = 0; i < n; i++) {
        g->deps[i] = calloc(i ? i : 1, sizeof **g->deps);
        for (size_t j = 0; j < i; j++)
            if (rnd(4) == 0)
                g->deps[i][g->n_deps[i]++] = j;
        if (rnd(4) != 0)
            g->output[i] = random_object(0);
    }
}

static void dag_free(dag *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->deps[i]);
        json_decref(g->output[i]);
        sy_context_tree_unref(g->after[i]);
    }
    free(g->deps);
    free(g->n_deps);
    free(g->output);
    free(g->after);
}

/* The definition: the initial context, then every ancestor's output in
 * topological order (here: index order). */
static json_t *reference_input(const dag *g, const json_t *initial, size_t t)
{
    bool *anc = calloc(g->n, sizeof *anc);
    for (size_t k = 0; k < g->n_deps[t]; k++)
        anc[g->deps[t][k]] = true;
    for (size_t i = t; i-- > 0;) /* dependencies always come earlier */
        if (anc[i])
            for (size_t k = 0; k < g->n_deps[i]; k++)
                anc[g->deps[i][k]] = true;
    json_t *ctx = json_deep_copy(initial);
    for (size_t i = 0; i < t; i++)
        if (anc[i] && g->output[i])
            assert_int_equal(sy_json_merge(ctx, g->output[i]), 0);
    free(anc);
    return ctx;
}

/* The incremental way: a task's input is the merge of its direct
 * dependencies' trees only. */
static sy_context_tree *tree_input(dag *g, sy_context_tree *initial, size_t t)
{
    if (g->n_deps[t] == 0)
        return sy_context_tree_ref(initial);
    sy_context_tree *in = NULL;
    for (size_t k = 0; k < g->n_deps[t]; k++) {
        sy_context_tree *m = sy_context_tree_merge(in, g->after[g->deps[t][k]]);
        sy_context_tree_unref(in);
        in = m;
    }
    return in;
}

/* Same text: the same values, and keys in the same order (jansson keeps
 * insertion order); with `order` false, the same values only. */
static void assert_same_as(json_t *want, json_t *got, bool order)
{
    int flags = JSON_COMPACT | JSON_ENCODE_ANY | (order ? 0 : JSON_SORT_KEYS);
    char *w = json_dumps(want, flags);
    char *h = json_dumps(got, flags);
    assert_non_null(w);
    assert_non_null(h);
    assert_string_equal(h, w);
    free(w);
    free(h);
}

static void assert_same(json_t *want, json_t *got) { assert_same_as(want, got, true); }

/* Against the definition on 500 random DAGs of up to 31 tasks.  Where a
 * key path changes between object and non-object, a re-created object's
 * keys may come in another order than the one-by-one merge's (the tree
 * keeps the first write of a key, not every write); values are the same
 * either way. */
/* Walks g in order: each task's input from the trees, against the
 * definition. */
static void check_dag(dag *g, json_t *initial, bool order)
{
    sy_context_tree *root = sy_context_tree_from_object(initial, 0);
    assert_non_null(root);
    for (size_t t = 0; t < g->n; t++) {
        sy_context_tree *in = tree_input(g, root, t);
        json_t *want = reference_input(g, initial, t);
        json_t *got = sy_context_tree_json(in);
        assert_same_as(want, got, order);
        json_decref(want);
        json_decref(got);
        if (g->output[t]) {
            sy_context_tree *out = sy_context_tree_from_object(g->output[t], (uint32_t)t + 1);
            g->after[t] = sy_context_tree_merge(in, out);
            sy_context_tree_unref(out);
            sy_context_tree_unref(in);
        } else {
            g->after[t] = in;
        }
    }
    sy_context_tree_unref(root);
}

static void check_random_dags(bool stable_types)
{
    stable = stable_types;
    for (int round = 0; round < 500; round++) {
        dag g;
        dag_random(&g, 2 + rnd(30));
        json_t *initial = random_object(0);
        check_dag(&g, initial, stable_types);
        json_decref(initial);
        dag_free(&g);
    }
}

/* A write cut by a later replacement must not come back through a subtree
 * shared from the side that still held it: T4's p = 0 wipes T3's b. */
static void test_cut_write_stays_cut(void **state)
{
    (void)state;
    static const char *const outputs[] = {
        "{\"p\":{\"x\":{\"a\":1}}}", "{\"p\":0}", "{\"p\":{\"x\":{\"b\":1}}}",
        "{\"p\":0}", "{\"p\":{\"x\":{\"c\":1}}}", NULL, NULL};
    static const size_t deps[7][2] = {{0}, {0}, {1}, {0}, {3}, {5, 2}, {6, 4}};
    static const size_t n_deps[7] = {0, 0, 1, 0, 1, 2, 2};
    dag g;
    dag_random(&g, 7);
    for (size_t t = 0; t < 7; t++) {
        json_decref(g.output[t]);
        g.output[t] = outputs[t] ? json_loads(outputs[t], 0, NULL) : NULL;
        g.n_deps[t] = n_deps[t];
        for (size_t k = 0; k < n_deps[t]; k++)
            g.deps[t][k] = deps[t][k] - 1; /* written 1-based above */
    }
    json_t *initial = json_object();
    check_dag(&g, initial, true);
    json_t *got = sy_context_tree_json(g.after[6]);
    json_t *want = json_pack("{s:{s:{s:i}}}", "p", "x", "c", 1);
    assert_same(want, got);
    json_decref(got);
    json_decref(want);
    json_decref(initial);
    dag_free(&g);
}

static void test_matches_topological_merge(void **state)
{
    (void)state;
    check_random_dags(true);
}

static void test_matches_when_types_change(void **state)
{
    (void)state;
    check_random_dags(false);
}

static void test_later_write_wins_over_deeper_ancestry(void **state)
{
    (void)state;
    /* a(1) -> b(2) and c(3), d after b and c: c is later in topological
     * order, so its value of k wins even though b's is "closer" to d's
     * first dependency; and b's replacement of o by a number is undone by
     * nothing, so o stays 5 while c's object write comes later. */
    json_t *initial = json_pack("{s:s}", "k", "initial");
    json_t *a = json_pack("{s:s, s:{s:i}}", "k", "a", "o", "x", 1);
    json_t *b = json_pack("{s:s, s:i}", "k", "b", "o", 5);
    json_t *c = json_pack("{s:s}", "k", "c");
    sy_context_tree *root = sy_context_tree_from_object(initial, 0);
    sy_context_tree *ta = sy_context_tree_from_object(a, 1);
    sy_context_tree *tb = sy_context_tree_from_object(b, 2);
    sy_context_tree *tc = sy_context_tree_from_object(c, 3);
    sy_context_tree *after_a = sy_context_tree_merge(root, ta);
    sy_context_tree *after_b = sy_context_tree_merge(after_a, tb);
    sy_context_tree *after_c = sy_context_tree_merge(after_a, tc);
    sy_context_tree *in_d = sy_context_tree_merge(after_c, after_b);
    json_t *got = sy_context_tree_json(in_d);
    json_t *want = json_pack("{s:s, s:i}", "k", "c", "o", 5);
    assert_same(want, got);
    /* A task without output shares its input: no copy. */
    sy_context_tree *again = sy_context_tree_merge(in_d, NULL);
    assert_ptr_equal(again, in_d);
    sy_context_tree *same = sy_context_tree_merge(after_a, after_a);
    assert_ptr_equal(same, after_a);
    sy_context_tree_unref(same);
    sy_context_tree_unref(again);
    json_decref(got);
    json_decref(want);
    sy_context_tree *trees[] = {root, ta, tb, tc, after_a, after_b, after_c, in_d};
    for (size_t i = 0; i < sizeof trees / sizeof *trees; i++)
        sy_context_tree_unref(trees[i]);
    json_decref(initial);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_empty(void **state)
{
    (void)state;
    json_t *got = sy_context_tree_json(NULL);
    assert_true(json_is_object(got) && json_object_size(got) == 0);
    json_decref(got);
    assert_null(sy_context_tree_from_object(NULL, 0));
    json_t *arr = json_array();
    assert_null(sy_context_tree_from_object(arr, 0));
    json_decref(arr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_topological_merge),
        cmocka_unit_test(test_matches_when_types_change),
        cmocka_unit_test(test_cut_write_stays_cut),
        cmocka_unit_test(test_later_write_wins_over_deeper_ancestry),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
