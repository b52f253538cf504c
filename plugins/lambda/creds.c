/*
 * creds.c -- the credentials chain up to the shared files: the
 * instance's settings, then AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, then the profile (AWS_PROFILE, else "default") of
 * the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 * ~/.aws/credentials), then of the config file (AWS_CONFIG_FILE, else
 * ~/.aws/config, where its section is [profile NAME], or [default]), as
 * the AWS CLI reads them.  The metadata endpoints come last (metadata.c).
 *
 * Secrets never reach a message: errors name the file, the line and the
 * key, never a value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lambda.h"

static void wipe(char **p)
{
    if (*p) {
        OPENSSL_cleanse(*p, strlen(*p));
        free(*p);
        *p = NULL;
    }
}

void sy_lambda_creds_clear(sy_lambda_creds *c)
{
    free(c->access_key);
    c->access_key = NULL;
    wipe(&c->secret_key);
    wipe(&c->session_token);
    c->expires_ms = 0;
    c->source[0] = '\0';
}

static int set(sy_lambda_creds *out, const char *ak, const char *sk,
               const char *tok, const char *source, char *err,
               size_t err_len)
{
    sy_lambda_creds_clear(out);
    out->access_key = strdup(ak);
    out->secret_key = strdup(sk);
    out->session_token = tok && tok[0] ? strdup(tok) : NULL;
    if (!out->access_key || !out->secret_key ||
        (tok && tok[0] && !out->session_token)) {
        sy_lambda_creds_clear(out);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    snprintf(out->source, sizeof out->source, "%s", source);
    return SY_OK;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Reads section [section] of an INI file.  SY_OK with *found (and *seen
 * when the section is there); SY_EINVAL for a malformed file, a section
 * with a key and no secret, or a missing file that must exist. */
static int from_file(const char *path, const char *section, const char *profile,
                     sy_lambda_creds *out, bool *found, bool *seen_out,
                     bool must_exist, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (must_exist || errno != ENOENT) {
            sy_sdk_errf(err, err_len, "%s: %s", path, strerror(errno));
            return SY_EINVAL;
        }
        return SY_OK;
    }
    char line[4096];
    char *ak = NULL, *sk = NULL, *tok = NULL;
    bool in = false, seen = false;
    int lineno = 0, rc = SY_OK;
    while (rc == SY_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end) {
                sy_sdk_errf(err, err_len, "%s:%d: a section needs its ']'",
                            path, lineno);
                rc = SY_EINVAL;
                break;
            }
            *end = '\0';
            in = strcmp(trim(s + 1), section) == 0;
            seen = seen || in;
            continue;
        }
        if (!in)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            sy_sdk_errf(err, err_len, "%s:%d: expected KEY = VALUE", path,
                        lineno);
            rc = SY_EINVAL;
            break;
        }
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        char **slot = strcmp(k, "aws_access_key_id") == 0       ? &ak
                      : strcmp(k, "aws_secret_access_key") == 0 ? &sk
                      : strcmp(k, "aws_session_token") == 0     ? &tok
                                                                : NULL;
        if (slot) {
            wipe(slot);
            *slot = strdup(v);
            if (!*slot) {
                sy_sdk_errf(err, err_len, "out of memory");
                rc = SY_ENOMEM;
            }
        }
    }
    OPENSSL_cleanse(line, sizeof line);
    fclose(f);
    if (rc == SY_OK && (ak || sk) && !(ak && sk)) {
        sy_sdk_errf(err, err_len, "%s: profile %s has %s but not %s", path,
                    profile, ak ? "aws_access_key_id" : "aws_secret_access_key",
                    ak ? "aws_secret_access_key" : "aws_access_key_id");
        rc = SY_EINVAL;
    } else if (rc == SY_OK && ak && sk) {
        char source[160];
        snprintf(source, sizeof source, "profile %.40s of %.100s", profile,
                 path);
        rc = set(out, ak, sk, tok, source, err, err_len);
        *found = rc == SY_OK;
    }
    *seen_out = *seen_out || seen;
    free(ak);
    wipe(&sk);
    wipe(&tok);
    return rc;
}

/* The path of a shared file into buf: $ENV when set (true: named, so it
 * must exist), else ~/.aws/NAME; "" when there is no HOME either. */
static bool shared_path(char *buf, size_t len, const char *env, const char *name)
{
    const char *file = getenv(env);
    if (file && file[0]) {
        snprintf(buf, len, "%s", file);
        return true;
    }
    const char *home = getenv("HOME");
    if (home && home[0])
        snprintf(buf, len, "%s/.aws/%s", home, name);
    else
        buf[0] = '\0';
    return false;
}

int sy_lambda_creds_static(const char *access_key, const char *secret_key,
                           const char *session_token, const char *profile,
                           sy_lambda_creds *out, bool *found, char *err,
                           size_t err_len)
{
    *found = false;
    if (access_key || secret_key) {
        if (!access_key || !secret_key) {
            sy_sdk_errf(err, err_len, "%s: set with %s, or neither",
                        access_key ? "access_key_id" : "secret_access_key",
                        access_key ? "secret_access_key" : "access_key_id");
            return SY_EINVAL;
        }
        *found = true;
        return set(out, access_key, secret_key, session_token,
                   "the instance settings", err, err_len);
    }
    const char *ak = getenv("AWS_ACCESS_KEY_ID");
    const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
    if (ak && ak[0] && sk && sk[0]) {
        *found = true;
        return set(out, ak, sk, getenv("AWS_SESSION_TOKEN"),
                   "the environment", err, err_len);
    }
    const char *env_profile = getenv("AWS_PROFILE");
    bool explicit_profile = profile || (env_profile && env_profile[0]);
    if (!profile)
        profile = env_profile && env_profile[0] ? env_profile : "default";
    char cred[4096], conf[4096], section[300];
    bool cred_named = shared_path(cred, sizeof cred, "AWS_SHARED_CREDENTIALS_FILE",
                                  "credentials");
    bool conf_named = shared_path(conf, sizeof conf, "AWS_CONFIG_FILE", "config");
    bool seen = false;
    int rc = SY_OK;
    if (cred[0])
        rc = from_file(cred, profile, profile, out, found, &seen, cred_named, err, err_len);
    if (rc == SY_OK && !*found && conf[0]) {
        /* The config file names a profile's section [profile NAME]. */
        if (strcmp(profile, "default") == 0)
            snprintf(section, sizeof section, "default");
        else
            snprintf(section, sizeof section, "profile %.280s", profile);
        rc = from_file(conf, section, profile, out, found, &seen, conf_named, err, err_len);
    }
    if (rc == SY_OK && !*found && explicit_profile && !seen) {
        if (cred[0] && conf[0])
            sy_sdk_errf(err, err_len, "%s: no profile [%s], nor [profile %s] in %s", cred,
                        profile, profile, conf);
        else
            sy_sdk_errf(err, err_len, "%s: no profile [%s]", cred[0] ? cred : conf,
                        profile);
        rc = SY_EINVAL;
    }
    return rc;
}
