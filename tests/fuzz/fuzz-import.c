/* tests/fuzz/fuzz-import.c - image tarballs imported into a store
 * (core/image/import.c over libarchive and jansson: member names, links,
 * the digests names claim, manifest.json, index.json, the made manifest)
 *
 * The input is one tarball (docker save or OCI layout, or anything),
 * imported into a store inside a cage that also holds a directory
 * "outside" with one file.  Beyond not crashing: nothing appears in the
 * cage but the store, "outside" and the input, "outside" keeps its file
 * unchanged, no temporary is left, every blob is what its name says, and
 * the store can be removed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "fuzz.h"
#include "error.h"
#include "platform.h"
#include "image/image-int.h"

static void check_blobs(const char *store)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/blobs/sha256", store);
    DIR *d = opendir(dir);
    if (!d)
        fz_fail("the store's blobs are gone: %s", strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (!strcmp(n, ".") || !strcmp(n, ".."))
            continue;
        if (strstr(n, ".tmp-"))
            fz_fail("the temporary '%s' was left", n);
        char digest[300], *body;
        size_t len;
        snprintf(digest, sizeof digest, "sha256:%s", n);
        if (!img_digest_valid(digest))
            fz_fail("'%s' in blobs/sha256 is not a digest", n);
        img_store s = { .dir = (char *)store, .lock_fd = -1 };
        if (img_store_read(&s, digest, 64u << 20, &body, &len) != SBX_OK)
            fz_fail("blob %s cannot be read", n);
        char got[IMG_DIGEST_LEN + 1];
        img_digest_of(body, len, got);
        free(body);
        if (strcmp(got, digest) != 0)
            fz_fail("blob %s holds %s", n, got);
    }
    closedir(d);
}

static const char *const cage_allows[] = { "store", "input", NULL };

static int one(const uint8_t *data, size_t size)
{
    char *made = fz_path("icage");
    img_rmtree(made);
    fz_cage_make("icage");
    fz_write("icage/input", data, size);
    char *cage = realpath(made, NULL);
    free(made);
    if (!cage)
        abort();
    char store[4200], input[4200];
    snprintf(store, sizeof store, "%s/store", cage);
    snprintf(input, sizeof input, "%s/input", cage);
    img_store s;
    if (img_store_open(&s, NULL, store) != SBX_OK)
        abort();
    /* The names the tarball gives: their parsing is part of the input. */
    core_platform host;
    core_platform_host(&host);
    img_import(&s, input, NULL, &host, NULL, NULL);
    fz_cage_check(cage, cage_allows);
    check_blobs(s.dir);
    img_store_close(&s);
    if (img_rmtree(cage) != SBX_OK)
        fz_fail("the store cannot be removed: %s", sbx_error_message(sbx_ctx_last_error(NULL)));
    core_error_clear();
    free(cage);
    return 0;
}

FZ_TARGET(import, NULL, one)
