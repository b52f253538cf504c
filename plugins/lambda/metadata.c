/*
 * metadata.c -- credentials from the metadata endpoints (to come).
 */
#include "lambda.h"

int sy_lambda_meta_init(sy_instance *inst, char *err, size_t err_len)
{
    (void)inst;
    sy_sdk_errf(err, err_len, "no AWS credentials: none in the settings "
                "(access_key_id), the environment (AWS_ACCESS_KEY_ID) or the "
                "shared credentials file");
    return SY_EINVAL;
}

void sy_lambda_meta_free(sy_instance *inst) { (void)inst; }

bool sy_lambda_meta_ready(sy_instance *inst)
{
    return inst->creds.access_key != NULL;
}

bool sy_lambda_meta_done(sy_instance *inst, CURL *easy, CURLcode code)
{
    (void)inst; (void)easy; (void)code;
    return false;
}
