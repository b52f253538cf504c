/* Executor instances: made from a plugin or a descriptor, created,
 * destroyed. */
#include "executor/instance.h"

#include <string.h>

#include <switchyard/json_params.h>

#include "base/util.h"
#include "executor/call_record.h"
#include "executor/host_api.h"

void sy_instance_init(sy_instance_entry *e, const char *name, const sy_executor *desc,
                      json_t *settings)
{
    *e = (sy_instance_entry){.name = name, .desc = desc, .settings = settings};
    e->host.name = name;
    e->host.plugin = desc ? desc->name : NULL;
}

void sy_instance_init_plugin(sy_instance_entry *e, const char *name, sy_plugin *plugin,
                             json_t *settings)
{
    sy_instance_init(e, name, plugin ? plugin->desc : NULL, settings);
    e->plugin = plugin;
}

int sy_instance_create(sy_instance_entry *e, char *err, size_t err_len)
{
    if (!e->desc)
        return sy_errf(err, err_len, "its plugin is not loaded"), SY_ESTATE;
    if (!e->settings && !(e->settings = json_object()))
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    if (err_len)
        err[0] = '\0';
    sy_instance *inst = NULL;
    /* A plugin loaded from a file gets its code's range registered, so a
     * crash in it is named (call_record.h); one built into the program
     * (tests, embedders) does not: its range is the host's own. */
    if (e->plugin)
        sy_call_register_plugin(e->desc->name, e->desc);
    sy_call_begin(e, "create", NULL, 0, 0, 0);
    int rc = e->desc->create(&sy_host_api_table, &e->host, sy_sdk_params_view(e->settings), &inst,
                             err, err_len);
    sy_call_end();
    if (rc != SY_OK || !inst) {
        if (!err_len || !err[0])
            sy_errf(err, err_len, "%s", rc == SY_OK ? "create() returned no instance"
                                                    : "create() failed without a message");
        return rc != SY_OK ? rc : SY_EINTERNAL;
    }
    e->inst = inst;
    /* The registry keeps a plugin mapped while it has instances. */
    if (e->plugin)
        e->plugin->instances++;
    return SY_OK;
}

void sy_instance_destroy(sy_instance_entry *e)
{
    if (e->inst) {
        sy_call_begin(e, "destroy", NULL, 0, 0, 0);
        e->desc->destroy(e->inst);
        sy_call_end();
        e->inst = NULL;
        sy_completion_forget_host(&e->host);
        if (e->plugin)
            e->plugin->instances--;
    }
    json_decref(e->settings);
    e->settings = NULL;
}

sy_instance_entry *sy_instance_find(sy_instance_entry *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}
