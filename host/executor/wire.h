/*
 * executor/wire.h -- messages between the host and an isolated plugin's
 * worker process (isolated.h): JSON objects, each framed by its length.
 *
 * A frame is a 4-byte big-endian length and that many bytes of compact
 * JSON.  The bound on a frame is SY_WIRE_MAX, above any context the host
 * allows (inputs and outputs are at most max_context_bytes, 2 GiB at the
 * very most, in practice 16 MiB), so a corrupt length is an error, never
 * an allocation of whatever the length says.
 *
 * Threads: a descriptor is read by one thread; writers serialise
 * themselves (the callers hold a lock around sy_wire_send).
 */
#ifndef SY_EXECUTOR_WIRE_H
#define SY_EXECUTOR_WIRE_H

#include <stddef.h>

#include <jansson.h>

#define SY_WIRE_MAX ((size_t)1 << 30)

/* Writes one message, retrying on EINTR and short writes (blocking).
 * 0, or -1 with errno (EPIPE when the other side is gone). */
int sy_wire_send(int fd, const json_t *msg);

/* Reads one message (blocking).  The object, owned by the caller; NULL at
 * a clean end of stream (err empty) or on an error (err says which). */
json_t *sy_wire_recv(int fd, char *err, size_t err_len);

#endif
