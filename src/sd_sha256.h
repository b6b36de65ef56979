/* sd_sha256.h — SHA-256 (FIPS 180-4) of a file, for the model identity that
 * run and check print (none of simdec's dependencies offers a hash). */
#ifndef SD_SHA256_H
#define SD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "sd_error.h"

typedef struct sd_sha256 {
    uint32_t h[8];
    uint64_t len;       /* bytes hashed so far */
    unsigned char buf[64];
    size_t fill;        /* bytes in buf */
} sd_sha256;

void sd_sha256_init(sd_sha256 *s);
void sd_sha256_update(sd_sha256 *s, const void *data, size_t n);
/* The digest as 64 lowercase hex digits and a NUL. */
void sd_sha256_hex(sd_sha256 *s, char hex[65]);

/* The SHA-256 of the file at path as hex; SD_EIO naming the file. */
int sd_sha256_file(const char *path, char hex[65], sd_error *err);

#endif
