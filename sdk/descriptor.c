/*
 * descriptor.c -- the checks of an executor descriptor already in memory
 * (switchyard/loader.h): its ABI header, the minor it needs, its name,
 * version and required functions.  One implementation, so the host and
 * the conformance kit refuse the same plugins with the same words.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <switchyard/loader.h>
#include <switchyard/sdk.h>

#include "loader_internal.h"

bool sy_sdk_plugin_name_ok(const char *name)
{
    if (!name || !*name)
        return false;
    for (const char *s = name; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* An invalid name, quoted and shortened so the reason stays one short
 * line whatever the plugin declared. */
static int refuse_name(const char *name, char *err, size_t err_len)
{
    if (!name || !*name) {
        sy_sdk_errf(err, err_len, "%s", name ? "descriptor has an empty name"
                    : "descriptor has no name (name is NULL)");
        return SY_EINVAL;
    }
    char shown[68];
    size_t i = 0;
    for (; name[i] && i < 64; i++)
        shown[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
    memcpy(shown + i, name[i] ? "..." : "", name[i] ? 4 : 1);
    sy_sdk_errf(err, err_len, "invalid plugin name '%s': use only letters, "
                "digits, '_' and '-'", shown);
    return SY_EINVAL;
}

static const char *missing_function(const sy_executor *d)
{
    if (!d->create)
        return "create";
    if (!d->destroy)
        return "destroy";
    if (!d->capacity)
        return "capacity";
    if (!d->submit)
        return "submit";
    if (!d->cancel)
        return "cancel";
    return NULL;
}

/* The ABI header every major version shares: size, abi_major, abi_minor. */
#define DESCRIPTOR_HEADER_SIZE \
    (offsetof(sy_executor, abi_minor) + sizeof(uint32_t))

/* Every descriptor field after the ABI header, with the minor that added
 * it.  A plugin needs at least the minor of the newest field it sets (any
 * non-zero byte: added fields mean "not used" when zero), whatever its
 * abi_minor says.  Each later minor appends its fields here with its
 * number. */
#define FIELD(f, minor)                                                       \
    {#f, offsetof(sy_executor, f), sizeof(((sy_executor *)0)->f), minor}
static const struct descriptor_field {
    const char *name;
    size_t offset, size;
    uint32_t since_minor;
} descriptor_fields[] = {
    FIELD(name, 0),          FIELD(version, 0),  FIELD(description, 0),
    FIELD(instance_params, 0), FIELD(task_params, 0), FIELD(create, 0),
    FIELD(destroy, 0),       FIELD(capacity, 0), FIELD(submit, 0),
    FIELD(cancel, 0),        FIELD(validate, 0), FIELD(metrics, 0),
    FIELD(resume, 4),
};
#undef FIELD
_Static_assert(offsetof(sy_executor, resume) +
                       sizeof(((sy_executor *)0)->resume) ==
                   sizeof(sy_executor),
               "a field was added to sy_executor: list it in "
               "descriptor_fields with the minor that adds it");

static bool bytes_set(const sy_executor *d, size_t from, size_t to)
{
    const unsigned char *b = (const unsigned char *)d;
    for (size_t i = from; i < to; i++)
        if (b[i])
            return true;
    return false;
}

/* The lowest host minor the plugin needs: its abi_minor, raised to the
 * minor of the newest field it sets within its size.  *field names that
 * field, or is NULL when the declared minor stands. */
static uint32_t minor_needed(const sy_executor *d, const char **field)
{
    uint32_t need = d->abi_minor;
    *field = NULL;
    for (size_t i = 0; i < sizeof descriptor_fields /
                               sizeof descriptor_fields[0]; i++) {
        const struct descriptor_field *f = &descriptor_fields[i];
        if (f->offset + f->size <= d->size && f->since_minor > need &&
            bytes_set(d, f->offset, f->offset + f->size)) {
            need = f->since_minor;
            *field = f->name;
        }
    }
    return need;
}

/* The ABI header: a sane size, our major.  A descriptor of the pre-1.0
 * layout (abi_major, abi_minor, size) reads as size 1 and major 0, so a
 * header too small for itself is reported as that. */
static int header_ok(const sy_executor *d, char *err, size_t err_len)
{
    if (d->size < DESCRIPTOR_HEADER_SIZE)
        sy_sdk_errf(err, err_len, "descriptor size %u is too small for any "
                    "sy_executor (built against a pre-1.0 header that put "
                    "abi_major first?); rebuild it against this host's SDK, "
                    "starting the descriptor with SY_EXECUTOR_V1",
                    (unsigned)d->size);
    else if (d->size > SY_SDK_DESCRIPTOR_SIZE_MAX)
        sy_sdk_errf(err, err_len, "descriptor size %u is implausible (over "
                    "%u bytes): not a sy_executor? start the descriptor "
                    "with SY_EXECUTOR_V1",
                    (unsigned)d->size, SY_SDK_DESCRIPTOR_SIZE_MAX);
    else if (d->abi_major != SY_EXECUTOR_ABI_MAJOR)
        sy_sdk_errf(err, err_len, "built for executor ABI %u.%u, this host "
                    "speaks %d.%d; rebuild it against this host's SDK",
                    (unsigned)d->abi_major, (unsigned)d->abi_minor,
                    SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
    else
        return SY_OK;
    return SY_EINVAL;
}

/* The minor the plugin needs must be one this host has.  Fields past this
 * host's layout, and the reserved field, were added by a minor this host
 * does not know, so setting any of them needs a newer host too. */
static int minor_ok(sy_sdk_plugin *p, const sy_executor *d, char *err,
                    size_t err_len)
{
    const char *field;
    uint32_t need = minor_needed(d, &field);
    p->abi_minor = need;
    if (need > SY_EXECUTOR_ABI_MINOR)
        sy_sdk_errf(err, err_len, "needs executor ABI %d.%u%s%s%s, newer "
                    "than this host's %d.%d; upgrade the host or rebuild "
                    "the plugin",
                    SY_EXECUTOR_ABI_MAJOR, (unsigned)need,
                    field ? " (it sets " : "", field ? field : "",
                    field ? ")" : "", SY_EXECUTOR_ABI_MAJOR,
                    SY_EXECUTOR_ABI_MINOR);
    else if (d->reserved != 0)
        sy_sdk_errf(err, err_len, "sets the reserved descriptor field, "
                    "unknown to this host's executor ABI %d.%d; upgrade the "
                    "host or rebuild the plugin with SY_EXECUTOR_V1",
                    SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
    else if (d->size > sizeof(sy_executor) &&
             bytes_set(d, sizeof(sy_executor), d->size))
        sy_sdk_errf(err, err_len, "sets descriptor fields past this host's "
                    "executor ABI %d.%d layout (%u bytes, this host knows "
                    "%zu): it needs a newer 1.x host (its "
                    "SY_EXECUTOR_MIN_MINOR should say which); upgrade the "
                    "host or rebuild the plugin",
                    SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR,
                    (unsigned)d->size, sizeof(sy_executor));
    else
        return SY_OK;
    return SY_EINVAL;
}

/* Notes the name and version for a listing even when the plugin is
 * refused later, but only fields that the 1.x layout and the declared
 * size both cover: called once the header is known to be 1.x. */
static void note_identity(sy_sdk_plugin *p, const sy_executor *d)
{
    if (SY_HAS_FIELD(d, sy_executor, name) && sy_sdk_plugin_name_ok(d->name))
        p->name = d->name;
    if (SY_HAS_FIELD(d, sy_executor, version) && d->version)
        p->version = d->version;
}

int sy_sdk__descriptor_read(sy_sdk_plugin *p, const sy_executor *d,
                            char *err, size_t err_len)
{
    /* Only the ABI header is common to every major version, and its
     * fields mean nothing until the size says they are there. */
    if (d->size >= DESCRIPTOR_HEADER_SIZE) {
        p->abi_major = d->abi_major;
        p->abi_minor = d->abi_minor;
    }
    int rc = header_ok(d, err, err_len);
    if (rc != SY_OK)
        return rc;
    note_identity(p, d);
    if (d->size < SY_SDK_EXECUTOR_SIZE_1_0) {
        sy_sdk_errf(err, err_len, "descriptor too small: %u bytes, ABI 1.0 "
                    "needs at least %zu",
                    (unsigned)d->size, (size_t)SY_SDK_EXECUTOR_SIZE_1_0);
        return SY_EINVAL;
    }
    rc = minor_ok(p, d, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (!sy_sdk_plugin_name_ok(d->name))
        return refuse_name(d->name, err, err_len);
    if (!d->version) {
        sy_sdk_errf(err, err_len, "descriptor has no version (version is "
                    "NULL)");
        return SY_EINVAL;
    }
    const char *fn = missing_function(d);
    if (fn) {
        sy_sdk_errf(err, err_len, "missing required function %s()", fn);
        return SY_EINVAL;
    }
    return SY_OK;
}

int sy_sdk_descriptor_check(const sy_executor *d, char *err, size_t err_len)
{
    if (!d) {
        sy_sdk_errf(err, err_len, SY_EXECUTOR_ENTRY_SYMBOL " returned NULL");
        return SY_EINVAL;
    }
    sy_sdk_plugin scratch;
    memset(&scratch, 0, sizeof scratch);
    return sy_sdk__descriptor_read(&scratch, d, err, err_len);
}
