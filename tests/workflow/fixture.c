/* tests/workflow/fixture.c -- see fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "fixture.h"

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
