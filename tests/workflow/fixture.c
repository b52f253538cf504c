/* tests/workflow/fixture.c -- see fixture.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "fixture.h"
#include "base/util.h"

int th_wf_setup(void **state)
{
    th_wf_fixture *f = calloc(1, sizeof *f);
    sy_diags_init(&f->d);
    f->tmp = th_mkdtemp();
    *state = f;
    return 0;
}

int th_wf_teardown(void **state)
{
    th_wf_fixture *f = *state;
    sy_workflow_free(f->wf);
    sy_diags_free(&f->d);
    th_rmtree(f->tmp);
    free(f);
    return 0;
}

int th_wf_load(th_wf_fixture *f, const char *name, const char *text)
{
    char *path = th_write(f->tmp, name, text);
    sy_workflow_free(f->wf);
    f->wf = NULL;
    int e = sy_workflow_load_file(path, NULL, NULL, &f->wf, &f->d);
    free(path);
    if (getenv("SY_TEST_VERBOSE"))
        th_diag_dump(&f->d);
    return e;
}

void th_wf_cached_twice(th_wf_fixture *f, const char *valid,
                        void (*check)(const sy_workflow *wf))
{
    char *dir = sy_path_join(f->tmp, "wf"), *cache = sy_path_join(f->tmp, "cache");
    assert_int_equal(mkdir(dir, 0755), 0);
    /* A file of 64 KiB or more is cached: a long comment first. */
    size_t pad = 70000;
    char *text = malloc(strlen(valid) + pad + 1);
    text[0] = '#';
    memset(text + 1, ' ', pad - 2);
    text[pad - 1] = '\n';
    strcpy(text + pad, valid);
    free(th_write(dir, "big.cfg", text));
    free(text);
    char hash[65] = "";
    for (int round = 0; round < 2; round++) {
        sy_workflow **v = NULL;
        size_t n = 0;
        assert_int_equal(sy_workflow_load_dir_cached(dir, cache, NULL, NULL, &v, &n, &f->d), 0);
        assert_int_equal(n, 1);
        /* The hit keeps no text: its definition is NULL. */
        assert_true(round == 0 ? v[0]->definition != NULL : v[0]->definition == NULL);
        check(v[0]);
        if (round == 0)
            memcpy(hash, v[0]->hash, sizeof hash);
        else
            assert_string_equal(v[0]->hash, hash);
        sy_workflow_free(v[0]);
        free(v);
    }
    free(dir);
    free(cache);
}

void th_wf_refuses_member(const char *member, const char *const *bad, size_t n,
                          const char *why)
{
    for (size_t i = 0; i < n; i++) {
        char text[512], err[256] = "";
        snprintf(text, sizeof text,
                 "{\"base_dir\":\"\",\"name\":\"w\",\"tasks\":[{\"%s\":%s,\"id\":\"a\"}],"
                 "\"tenant\":\"public\",\"version\":2}",
                 member, bad[i]);
        sy_workflow *wf = sy_workflow_from_json(text, err, sizeof err);
        if (wf)
            fail_msg("accepted: %s", bad[i]);
        if (!strstr(err, why))
            fail_msg("%s: the error lacks \"%s\": %s", bad[i], why, err);
    }
}

sy_workflow *th_wf_read_back(th_wf_fixture *f)
{
    char err[256] = "";
    sy_workflow *back = sy_workflow_from_json(f->wf->definition, err, sizeof err);
    if (!back)
        fail_msg("from_json: %s", err);
    assert_string_equal(back->hash, f->wf->hash);
    return back;
}
