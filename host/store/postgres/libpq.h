/*
 * store/postgres/libpq.h -- libpq, loaded when a PostgreSQL store is first
 * opened rather than linked (base/library.h says why).
 *
 * Include this instead of <libpq-fe.h>: every call below goes through
 * sy_libpq, which sy_libpq_load fills.  pg_open (postgres.c) loads it
 * before the first call, so the store's files call libpq as usual.  A
 * function the store starts to call must be added to the list and to the
 * macros: one missing from the list fails to compile (no member), one
 * missing from the macros fails to link (libpq is not linked).
 */
#ifndef SY_STORE_POSTGRES_LIBPQ_H
#define SY_STORE_POSTGRES_LIBPQ_H

#include <libpq-fe.h>
#include <stddef.h>

#include "base/library.h"

/* The functions the store calls, in alphabetical order. */
#define SY_LIBPQ_FUNCTIONS(X, t) \
    X(t, PQclear) \
    X(t, PQcmdStatus) \
    X(t, PQcmdTuples) \
    X(t, PQconnectdbParams) \
    X(t, PQconninfoFree) \
    X(t, PQconninfoParse) \
    X(t, PQconsumeInput) \
    X(t, PQdb) \
    X(t, PQerrorMessage) \
    X(t, PQexec) \
    X(t, PQexecParams) \
    X(t, PQexecPrepared) \
    X(t, PQfinish) \
    X(t, PQfreemem) \
    X(t, PQgetisnull) \
    X(t, PQgetvalue) \
    X(t, PQhost) \
    X(t, PQnfields) \
    X(t, PQnotifies) \
    X(t, PQntuples) \
    X(t, PQport) \
    X(t, PQprepare) \
    X(t, PQreset) \
    X(t, PQresultErrorField) \
    X(t, PQresultErrorMessage) \
    X(t, PQresultStatus) \
    X(t, PQsetNoticeReceiver) \
    X(t, PQsetnonblocking) \
    X(t, PQsocket) \
    X(t, PQstatus) \
    X(t, PQtransactionStatus) \
    X(t, PQuser) \

/* Each function's address, typed by the library's header.  Written once
 * by sy_libpq_load, read by any thread after it. */
struct sy_libpq {
    SY_LIBPQ_FUNCTIONS(SY_LIBRARY_SLOT, sy_libpq)
};
extern struct sy_libpq sy_libpq;

/* Loads the library and fills sy_libpq, once per process (any thread).
 * 0, or -1 with "libpq.so.5 cannot be loaded (...): install the Debian
 * package libpq5" (or the function it lacks) in err, the same on
 * every call. */
int sy_libpq_load(char *err, size_t err_len);

#define PQclear(...) (sy_libpq.PQclear(__VA_ARGS__))
#define PQcmdStatus(...) (sy_libpq.PQcmdStatus(__VA_ARGS__))
#define PQcmdTuples(...) (sy_libpq.PQcmdTuples(__VA_ARGS__))
#define PQconnectdbParams(...) (sy_libpq.PQconnectdbParams(__VA_ARGS__))
#define PQconninfoFree(...) (sy_libpq.PQconninfoFree(__VA_ARGS__))
#define PQconninfoParse(...) (sy_libpq.PQconninfoParse(__VA_ARGS__))
#define PQconsumeInput(...) (sy_libpq.PQconsumeInput(__VA_ARGS__))
#define PQdb(...) (sy_libpq.PQdb(__VA_ARGS__))
#define PQerrorMessage(...) (sy_libpq.PQerrorMessage(__VA_ARGS__))
#define PQexec(...) (sy_libpq.PQexec(__VA_ARGS__))
#define PQexecParams(...) (sy_libpq.PQexecParams(__VA_ARGS__))
#define PQexecPrepared(...) (sy_libpq.PQexecPrepared(__VA_ARGS__))
#define PQfinish(...) (sy_libpq.PQfinish(__VA_ARGS__))
#define PQfreemem(...) (sy_libpq.PQfreemem(__VA_ARGS__))
#define PQgetisnull(...) (sy_libpq.PQgetisnull(__VA_ARGS__))
#define PQgetvalue(...) (sy_libpq.PQgetvalue(__VA_ARGS__))
#define PQhost(...) (sy_libpq.PQhost(__VA_ARGS__))
#define PQnfields(...) (sy_libpq.PQnfields(__VA_ARGS__))
#define PQnotifies(...) (sy_libpq.PQnotifies(__VA_ARGS__))
#define PQntuples(...) (sy_libpq.PQntuples(__VA_ARGS__))
#define PQport(...) (sy_libpq.PQport(__VA_ARGS__))
#define PQprepare(...) (sy_libpq.PQprepare(__VA_ARGS__))
#define PQreset(...) (sy_libpq.PQreset(__VA_ARGS__))
#define PQresultErrorField(...) (sy_libpq.PQresultErrorField(__VA_ARGS__))
#define PQresultErrorMessage(...) (sy_libpq.PQresultErrorMessage(__VA_ARGS__))
#define PQresultStatus(...) (sy_libpq.PQresultStatus(__VA_ARGS__))
#define PQsetNoticeReceiver(...) (sy_libpq.PQsetNoticeReceiver(__VA_ARGS__))
#define PQsetnonblocking(...) (sy_libpq.PQsetnonblocking(__VA_ARGS__))
#define PQsocket(...) (sy_libpq.PQsocket(__VA_ARGS__))
#define PQstatus(...) (sy_libpq.PQstatus(__VA_ARGS__))
#define PQtransactionStatus(...) (sy_libpq.PQtransactionStatus(__VA_ARGS__))
#define PQuser(...) (sy_libpq.PQuser(__VA_ARGS__))

#endif
