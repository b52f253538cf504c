/*
 * service/metrics.h -- the host's metrics in the Prometheus text format,
 * for `GET /metrics` and for a file that node_exporter's textfile
 * collector (or a test) reads.  Every metric is described in
 * docs/metrics.md.
 *
 * Threads: the engine's loop thread, between its turns (an HTTP handler
 * or a timer on that loop), after sy_service_start and before
 * sy_service_close: the figures are the engine's, moved by that thread
 * without locks.
 */
#ifndef SY_SERVICE_METRICS_H
#define SY_SERVICE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "service/service.h"

/* The content type to serve the text with. */
#define SY_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Writes the exposition (text format 0.0.4) of sv's engine into *text,
 * NUL-terminated, malloc'd: the caller frees it.  *len is its length
 * without the NUL.  Asks each configured instance its capacity() and its
 * own metrics(), as dispatch calls a plugin.  SY_OK; SY_ESTATE when sv has
 * no engine (not started); SY_ENOMEM.  On error *text is NULL. */
int sy_metrics_render(sy_service *sv, char **text, size_t *len);

/* `serve --metrics-file PATH`: the exposition written to PATH every
 * interval, and once more when the host stops, each time whole (a
 * temporary file in the same directory, then rename), so a reader never
 * sees half of one. */
typedef struct sy_metrics_file {
    sy_service *sv;
    char *path;            /* owned */
    int64_t interval_ms;
    uv_timer_t timer;
    bool started;
    bool failing;          /* the last write failed (logged once a run) */
} sy_metrics_file;

/* The default interval of the metrics file. */
#define SY_METRICS_FILE_INTERVAL_MS 15000

/* Writes PATH once (so a bad path is an error at start, not a log line
 * later) and arms the timer on sv's loop.  SY_OK, or an error with err. */
int sy_metrics_file_start(sy_metrics_file *mf, sy_service *sv, const char *path,
                          int64_t interval_ms, char *err, size_t err_len);

/* Writes the file now.  SY_OK, or SY_EIO with err. */
int sy_metrics_file_write(sy_metrics_file *mf, char *err, size_t err_len);

/* Writes it a last time and stops the timer; the handle finishes closing
 * in the loop's next run (sy_service_close runs it).  A no-op when not
 * started. */
void sy_metrics_file_stop(sy_metrics_file *mf);

#endif
