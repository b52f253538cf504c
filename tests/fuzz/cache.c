/*
 * cache.c -- fuzz target: a parse cache entry (host/workflow/cache_read.c)
 * read back by sy_wf_cache_decode.  An entry is a file anything may have
 * cut or changed: whatever its bytes, the reader refuses or gives a sound
 * workflow, never a crash.
 *
 * Input: the payload after the key, the version and the directory (the
 * target writes those, and the header with the payload's checksum, so
 * that the input reaches the reader rather than the checksum).
 * Properties: an accepted entry passes sy_fuzz_check_workflow once its
 * definition is written.
 */
#include <string.h>

#include <openssl/evp.h>

#include "fuzz.h"
#include "wf_check.h"
#include "workflow/internal.h"

static size_t put_str(unsigned char *p, const char *s)
{
    size_t n = strlen(s); /* short: one varint byte */
    p[0] = (unsigned char)(n + 1);
    memcpy(p + 1, s, n);
    return n + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned char key[32] = {1, 2, 3};
    const char *dir = "/fuzz";
    size_t pre = 32 + 2 + strlen(PACKAGE_VERSION) + strlen(dir);
    size_t len = SY_WF_CACHE_HEADER + pre + size;
    unsigned char *buf = malloc(len);
    uint32_t head[3] = {SY_WF_CACHE_FORMAT, SY_WF_CACHE_BOM, SY_DEFINITION_VERSION};
    memcpy(buf, SY_WF_CACHE_MAGIC, 4);
    memcpy(buf + 4, head, sizeof head);
    unsigned char *p = buf + SY_WF_CACHE_HEADER;
    memcpy(p, key, 32);
    p += 32;
    p += put_str(p, PACKAGE_VERSION);
    p += put_str(p, dir);
    if (size)
        memcpy(p, data, size);
    uint64_t payload = pre + size;
    unsigned int md_len = 0;
    SY_FUZZ_CHECK(EVP_Digest(buf + SY_WF_CACHE_HEADER, payload, buf + SY_WF_CACHE_SUM_AT,
                             &md_len, EVP_sha256(), NULL) == 1,
                  "sha256");
    memcpy(buf + SY_WF_CACHE_SUM_AT + 32, &payload, sizeof payload);
    int name_line = 0;
    sy_workflow *wf = sy_wf_cache_decode((const char *)buf, len, key, dir, &name_line);
    if (wf) {
        SY_FUZZ_CHECK(wf->definition == NULL, "a decoded workflow keeps no text");
        SY_FUZZ_CHECK(sy_workflow_seal(wf) == 0, "its definition cannot be written");
        sy_fuzz_check_workflow(wf);
    }
    sy_workflow_free(wf);
    free(buf);
    return 0;
}
