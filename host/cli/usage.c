/* The one way a command reports a usage error: below every command, so
 * they and main.c all call down to it. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

int sy_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "switchyard: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return SY_EXIT_USAGE;
}
