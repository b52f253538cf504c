/* The metrics file: the exposition written whole, every interval. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "service/metrics.h"

/* Writes all of buf to fd; false on an error (errno set). */
static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

int sy_metrics_file_write(sy_metrics_file *mf, char *err, size_t err_len)
{
    char *text;
    size_t len;
    int rc = sy_metrics_render(mf->sv, &text, &len);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "cannot render the metrics: %s",
                       rc == SY_ESTATE ? "the host is not started" : "out of memory"),
               rc;
    /* A temporary name in the same directory, then rename: a reader (the
     * textfile collector) sees the old file or the new one, never half. */
    char *tmp = sy_asprintf("%s.tmp.%ld", mf->path, (long)getpid());
    if (!tmp) {
        free(text);
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && write_all(fd, text, len);
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (ok && rename(tmp, mf->path) != 0) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        sy_errf(err, err_len, "cannot write the metrics file %s: %s", mf->path,
                strerror(saved));
        if (fd >= 0)
            unlink(tmp);
    }
    free(tmp);
    free(text);
    return ok ? SY_OK : SY_EIO;
}

static void on_tick(uv_timer_t *t)
{
    sy_metrics_file *mf = t->data;
    char err[512];
    if (sy_metrics_file_write(mf, err, sizeof err) != SY_OK) {
        /* Once per stretch of failures, not every interval. */
        if (!mf->failing)
            sy_log(SY_LOG_WARN, "metrics", "%s", err);
        mf->failing = true;
    } else if (mf->failing) {
        sy_log(SY_LOG_INFO, "metrics", "the metrics file %s is written again", mf->path);
        mf->failing = false;
    }
}

int sy_metrics_file_start(sy_metrics_file *mf, sy_service *sv, const char *path,
                          int64_t interval_ms, char *err, size_t err_len)
{
    memset(mf, 0, sizeof *mf);
    mf->sv = sv;
    mf->interval_ms = interval_ms > 0 ? interval_ms : SY_METRICS_FILE_INTERVAL_MS;
    mf->path = strdup(path);
    if (!mf->path)
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    int rc = sy_metrics_file_write(mf, err, err_len);
    if (rc != SY_OK) {
        free(mf->path);
        mf->path = NULL;
        return rc;
    }
    uv_timer_init(&sv->loop, &mf->timer);
    mf->timer.data = mf;
    /* Never what keeps the loop alive: the engine decides when it ends. */
    uv_unref((uv_handle_t *)&mf->timer);
    uv_timer_start(&mf->timer, on_tick, (uint64_t)mf->interval_ms, (uint64_t)mf->interval_ms);
    mf->started = true;
    return SY_OK;
}

void sy_metrics_file_stop(sy_metrics_file *mf)
{
    if (!mf->started)
        return;
    mf->started = false;
    char err[512];
    if (sy_metrics_file_write(mf, err, sizeof err) != SY_OK)
        sy_log(SY_LOG_WARN, "metrics", "%s", err);
    uv_timer_stop(&mf->timer);
    uv_close((uv_handle_t *)&mf->timer, NULL);
    free(mf->path);
    mf->path = NULL;
}
