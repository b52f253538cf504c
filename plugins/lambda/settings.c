/*
 * settings.c -- the lambda executor's instance settings and task
 * parameters: declared for the host's checks (unknown keys, types, file
 * and line), then read and judged here (values, combinations).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "lambda.h"

#define SPEC(n, t, d) \
    static const sy_param_spec n##_spec = {sizeof(sy_param_spec), 0, #n, t, d}

SPEC(function, SY_PARAM_STRING,
     "the function: name, name:alias, or full or partial ARN");
SPEC(qualifier, SY_PARAM_STRING, "version or alias to invoke (Qualifier)");
SPEC(invocation_type, SY_PARAM_STRING,
     "\"RequestResponse\" (wait for the answer, the default) or \"Event\"");
SPEC(log_tail, SY_PARAM_BOOL,
     "ask for the last 4 KB of the function's log (sync calls; default "
     "false)");
SPEC(client_context, SY_PARAM_STRING,
     "a JSON object passed to the function as its client context");
SPEC(region, SY_PARAM_STRING,
     "AWS region (default $AWS_REGION, then $AWS_DEFAULT_REGION)");
SPEC(endpoint_url, SY_PARAM_STRING,
     "a Lambda-compatible endpoint, http or https (default "
     "$AWS_ENDPOINT_URL_LAMBDA, then https://lambda.REGION.amazonaws.com)");
SPEC(ca_file, SY_PARAM_STRING,
     "a PEM file of the certificate authorities to trust for an https "
     "endpoint_url with its own CA (default: the system's)");
SPEC(max_in_flight, SY_PARAM_INT,
     "invocations in flight at once (default 1000)");
SPEC(adaptive, SY_PARAM_BOOL,
     "shrink the limit on throttling and grow it back (default true)");
SPEC(connect_timeout, SY_PARAM_DURATION, "to open a connection (default 5s)");
SPEC(timeout, SY_PARAM_DURATION,
     "whole invocation, when the task sets no timeout (default 15m30s)");
SPEC(max_payload_sync, SY_PARAM_INT,
     "largest input for RequestResponse, bytes (default 6 MiB)");
SPEC(max_payload_async, SY_PARAM_INT,
     "largest input for Event, bytes (default 1 MiB)");
SPEC(retries, SY_PARAM_INT,
     "tries repeated after a 5xx or a failed connection (default 3)");
SPEC(retry_base, SY_PARAM_DURATION,
     "first backoff before such a retry, full jitter (default 100ms)");
SPEC(retry_max, SY_PARAM_DURATION, "longest such backoff (default 5s)");
SPEC(access_key_id, SY_PARAM_STRING,
     "static credentials (else the environment, the shared file, the "
     "metadata endpoints)");
SPEC(secret_access_key, SY_PARAM_STRING, "with access_key_id; never shown");
SPEC(session_token, SY_PARAM_STRING, "with access_key_id; never shown");
SPEC(profile, SY_PARAM_STRING,
     "profile of the shared credentials file (default $AWS_PROFILE, then "
     "default)");

const sy_param_spec *const sy_lambda_instance_params[] = {
    &function_spec,       &qualifier_spec,        &invocation_type_spec,
    &log_tail_spec,       &client_context_spec,   &region_spec,
    &endpoint_url_spec,   &ca_file_spec,          &max_in_flight_spec,
    &adaptive_spec,
    &connect_timeout_spec, &timeout_spec,         &max_payload_sync_spec,
    &max_payload_async_spec, &retries_spec,       &retry_base_spec,
    &retry_max_spec,      &access_key_id_spec,    &secret_access_key_spec,
    &session_token_spec,  &profile_spec,          NULL};

const sy_param_spec *const sy_lambda_task_params[] = {
    &function_spec, &qualifier_spec, &invocation_type_spec, &log_tail_spec,
    &client_context_spec, NULL};

char *sy_lambda_base64(const void *data, size_t len)
{
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (out)
        EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    return out;
}

/* Lambda's names: letters, digits and - _ : . $ (ARNs hold `:`). */
static int check_function(const char *f, char *err, size_t err_len)
{
    size_t n = strlen(f);
    if (n == 0 || n > 256) {
        sy_sdk_errf(err, err_len, "function: must be a name, name:alias or "
                    "ARN of 1 to 256 characters");
        return SY_EINVAL;
    }
    for (const char *p = f; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-_:.$", *p)) {
            sy_sdk_errf(err, err_len, "function: '%.80s' holds '%c'; a "
                        "function is named by letters, digits and - _ : .",
                        f, *p);
            return SY_EINVAL;
        }
    return SY_OK;
}

static int check_qualifier(const char *q, char *err, size_t err_len)
{
    size_t n = strlen(q);
    bool ok = n > 0 && n <= 128;
    for (const char *p = q; ok && *p; p++)
        ok = isalnum((unsigned char)*p) || strchr("-_$", *p);
    if (!ok)
        sy_sdk_errf(err, err_len, "qualifier: '%.80s' is not a version or "
                    "alias (letters, digits, - _ $; at most 128)", q);
    return ok ? SY_OK : SY_EINVAL;
}

static int parse_type(const char *t, int *out, char *err, size_t err_len)
{
    if (strcmp(t, "RequestResponse") == 0)
        *out = SY_LAMBDA_SYNC;
    else if (strcmp(t, "Event") == 0)
        *out = SY_LAMBDA_EVENT;
    else {
        sy_sdk_errf(err, err_len, "invocation_type: must be "
                    "\"RequestResponse\" or \"Event\", got \"%.40s\"", t);
        return SY_EINVAL;
    }
    return SY_OK;
}

/* The client context: a JSON object, sent base64, at most 3583 bytes. */
static int client_context(const char *json, char **out, char *err,
                          size_t err_len)
{
    const char *p = json;
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '{') {
        sy_sdk_errf(err, err_len, "client_context: must be a JSON object");
        return SY_EINVAL;
    }
    *out = sy_lambda_base64(json, strlen(json));
    if (!*out) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    if (strlen(*out) > 3583) {
        sy_sdk_errf(err, err_len, "client_context: %zu bytes in base64, "
                    "over Lambda's 3583", strlen(*out));
        free(*out);
        *out = NULL;
        return SY_EINVAL;
    }
    return SY_OK;
}

static int dup_opt(const sy_host_api *api, const sy_params *cfg,
                   const char *key, const char *def, char **out, char *err,
                   size_t err_len)
{
    const char *v = NULL;
    int rc = sy_sdk_param_string(api, cfg, key, def, &v, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (v && !v[0]) {
        sy_sdk_errf(err, err_len, "%s: must not be empty", key);
        return SY_EINVAL;
    }
    *out = v ? strdup(v) : NULL;
    if (v && !*out) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    return SY_OK;
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* scheme://authority[/], plain http allowed here only. */
static int parse_endpoint(sy_lambda_settings *s, const char *url,
                          const char *from, char *err, size_t err_len)
{
    const char *rest = NULL;
    if (strncmp(url, "https://", 8) == 0)
        rest = url + 8;
    else if (strncmp(url, "http://", 7) == 0)
        rest = url + 7;
    size_t alen = rest ? strcspn(rest, "/?#") : 0;
    if (!rest || alen == 0 || memchr(rest, '@', alen) ||
        (rest[alen] && strcmp(rest + alen, "/") != 0)) {
        sy_sdk_errf(err, err_len, "%s: must be http://HOST[:PORT] or "
                    "https://HOST[:PORT] with no path, got \"%.80s\"", from,
                    url);
        return SY_EINVAL;
    }
    s->host = strndup(rest, alen);
    s->endpoint = strndup(url, (size_t)(rest - url) + alen);
    if (!s->host || !s->endpoint) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    return SY_OK;
}

static int read_numbers(const sy_host_api *api, const sy_params *cfg,
                        sy_lambda_settings *s, char *err, size_t err_len)
{
    int rc = sy_sdk_param_int(api, cfg, "max_in_flight",
                              SY_LAMBDA_DEFAULT_MAX_IN_FLIGHT, 1,
                              SY_LAMBDA_MAX_IN_FLIGHT, &s->max_in_flight, err,
                              err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "connect_timeout",
                                      SY_LAMBDA_DEFAULT_CONNECT_MS, 1,
                                      3600000, &s->connect_timeout_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "timeout",
                                      SY_LAMBDA_DEFAULT_TIMEOUT_MS, 1,
                                      INT32_MAX, &s->timeout_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, cfg, "max_payload_sync",
                              SY_LAMBDA_DEFAULT_SYNC_LIMIT, 1,
                              (int64_t)1 << 32, &s->max_payload_sync, err,
                              err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, cfg, "max_payload_async",
                              SY_LAMBDA_DEFAULT_ASYNC_LIMIT, 1,
                              (int64_t)1 << 32, &s->max_payload_async, err,
                              err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, cfg, "retries", SY_LAMBDA_DEFAULT_RETRIES,
                              0, 100, &s->retries, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "retry_base",
                                      SY_LAMBDA_DEFAULT_RETRY_BASE_MS, 1,
                                      3600000, &s->retry_base_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "retry_max",
                                      SY_LAMBDA_DEFAULT_RETRY_CAP_MS, 1,
                                      3600000, &s->retry_cap_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_bool(api, cfg, "adaptive", true, &s->adaptive, err,
                               err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_bool(api, cfg, "log_tail", false, &s->log_tail,
                               err, err_len);
    return rc;
}

int sy_lambda_settings_read(const sy_host_api *api, const sy_params *cfg,
                            sy_lambda_settings *s, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    int rc = read_numbers(api, cfg, s, err, err_len);
    const char *type = NULL, *ctx = NULL, *endpoint = NULL;
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "function", NULL, &s->function, err, err_len);
    if (rc == SY_OK && s->function)
        rc = check_function(s->function, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "qualifier", NULL, &s->qualifier, err,
                     err_len);
    if (rc == SY_OK && s->qualifier)
        rc = check_qualifier(s->qualifier, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, cfg, "invocation_type",
                                 "RequestResponse", &type, err, err_len);
    if (rc == SY_OK)
        rc = parse_type(type, &s->invocation_type, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, cfg, "client_context", NULL, &ctx, err,
                                 err_len);
    if (rc == SY_OK && ctx)
        rc = client_context(ctx, &s->client_context, err, err_len);
    const char *region_env = env_nonempty("AWS_REGION");
    if (!region_env)
        region_env = env_nonempty("AWS_DEFAULT_REGION");
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "region", region_env, &s->region, err,
                     err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, cfg, "endpoint_url", NULL, &endpoint,
                                 err, err_len);
    if (rc == SY_OK) {
        const char *from = "endpoint_url";
        if (!endpoint) {
            endpoint = env_nonempty("AWS_ENDPOINT_URL_LAMBDA");
            from = "AWS_ENDPOINT_URL_LAMBDA";
        }
        if (!endpoint) {
            endpoint = env_nonempty("AWS_ENDPOINT_URL");
            from = "AWS_ENDPOINT_URL";
        }
        s->custom_endpoint = endpoint != NULL;
        if (!s->region && s->custom_endpoint &&
            !(s->region = strdup("us-east-1"))) { /* emulators accept any */
            /* Not to be read as a region left out. */
            sy_sdk_errf(err, err_len, "region: out of memory");
            rc = SY_ENOMEM;
        } else if (!s->region) {
            sy_sdk_errf(err, err_len, "region: not set, and neither is "
                        "AWS_REGION nor AWS_DEFAULT_REGION");
            rc = SY_EINVAL;
        } else if (endpoint) {
            rc = parse_endpoint(s, endpoint, from, err, err_len);
        } else {
            char url[300];
            snprintf(url, sizeof url, "https://lambda.%s.amazonaws.com",
                     s->region);
            rc = parse_endpoint(s, url, "region", err, err_len);
        }
    }
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "access_key_id", NULL, &s->access_key, err,
                     err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "secret_access_key", NULL, &s->secret_key,
                     err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "session_token", NULL, &s->session_token, err,
                     err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "profile", NULL, &s->profile, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "ca_file", NULL, &s->ca_file, err, err_len);
    if (rc == SY_OK && s->ca_file && access(s->ca_file, R_OK) != 0) {
        sy_sdk_errf(err, err_len, "ca_file: cannot read %s: %s", s->ca_file,
                    strerror(errno));
        rc = SY_EINVAL;
    }
    if (rc != SY_OK)
        sy_lambda_settings_free(s);
    return rc;
}

static void free_secret(char **p)
{
    if (*p) {
        OPENSSL_cleanse(*p, strlen(*p));
        free(*p);
        *p = NULL;
    }
}

void sy_lambda_settings_free(sy_lambda_settings *s)
{
    free(s->function);
    free(s->qualifier);
    free(s->region);
    free(s->endpoint);
    free(s->host);
    free(s->client_context);
    free(s->access_key);
    free_secret(&s->secret_key);
    free_secret(&s->session_token);
    free(s->profile);
    free(s->ca_file);
    memset(s, 0, sizeof *s);
}

int sy_lambda_call_read(const sy_host_api *api, const sy_lambda_settings *s,
                        const sy_params *p, sy_lambda_call *call, char *err,
                        size_t err_len)
{
    memset(call, 0, sizeof *call);
    call->invocation_type = s->invocation_type;
    call->log_tail = s->log_tail;
    const char *type = NULL, *ctx = NULL;
    int rc = sy_sdk_param_string(api, p, "function", s->function,
                                 &call->function, err, err_len);
    if (rc == SY_OK && !call->function) {
        sy_sdk_errf(err, err_len, "function: not set by the task, and the "
                    "instance names no default function");
        return SY_EINVAL;
    }
    if (rc == SY_OK)
        rc = check_function(call->function, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, p, "qualifier", s->qualifier,
                                 &call->qualifier, err, err_len);
    if (rc == SY_OK && call->qualifier)
        rc = check_qualifier(call->qualifier, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, p, "invocation_type", NULL, &type, err,
                                 err_len);
    if (rc == SY_OK && type)
        rc = parse_type(type, &call->invocation_type, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_bool(api, p, "log_tail", s->log_tail,
                               &call->log_tail, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, p, "client_context", NULL, &ctx, err,
                                 err_len);
    if (rc == SY_OK && ctx)
        rc = client_context(ctx, &call->client_context, err, err_len);
    else if (rc == SY_OK && s->client_context) {
        call->client_context = strdup(s->client_context);
        if (!call->client_context) {
            sy_sdk_errf(err, err_len, "out of memory");
            rc = SY_ENOMEM;
        }
    }
    if (rc != SY_OK) {
        free(call->client_context);
        call->client_context = NULL;
    }
    return rc;
}
