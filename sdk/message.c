/*
 * message.c -- one-line messages for err buffers, and the names of
 * parameter types in them (switchyard/sdk.h, "Messages").
 */
#include <stdio.h>
#include <string.h>

#include <switchyard/sdk.h>

void sy_sdk_one_line(char *s)
{
    for (; s && *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

char *sy_sdk_verrf(char *err, size_t err_len, const char *fmt, va_list ap)
{
    static const char failed[] = "(unformattable message)";
    if (!err || err_len == 0)
        return err;
    if (vsnprintf(err, err_len, fmt, ap) < 0) {
        size_t n = sizeof failed - 1 < err_len - 1 ? sizeof failed - 1
                                                   : err_len - 1;
        memcpy(err, failed, n);
        err[n] = '\0';
    }
    sy_sdk_one_line(err);
    return err;
}

char *sy_sdk_errf(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_verrf(err, err_len, fmt, ap);
    va_end(ap);
    return err;
}

const char *sy_sdk_type_name(sy_param_type t)
{
    switch (t) {
    case SY_PARAM_STRING: return "a string";
    case SY_PARAM_INT: return "an integer";
    case SY_PARAM_FLOAT: return "a number";
    case SY_PARAM_BOOL: return "a boolean";
    case SY_PARAM_ARRAY: return "an array";
    case SY_PARAM_GROUP: return "a group";
    case SY_PARAM_DURATION: return "a duration";
    default: return "nothing";
    }
}
