/* tests/fuzz/found.c - what the fuzz targets found, as unit tests
 *
 * Each case feeds the input a fuzzer found (kept in tests/fuzz/corpus/
 * too, where tests/fuzz/replay runs it again) to the code it broke, and
 * checks what was fixed.  Leaks are measured with mallinfo2() in a plain
 * build; under the sanitizers (whose allocator it does not see) LSan
 * reports them at exit.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/tap.h"

/* Bytes in use on the heap, or 0 when the allocator is not glibc's. */
static __attribute__((unused)) size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}

#if HAVE_FZ_DOCKER
#include "docker-int.h"

/* corpus/docker/found-tar-name-leak: a name libarchive cannot write
 * (not UTF-8) made dk_tar_file fail, and the 16 KiB its archive wrote
 * while being freed (after the buffer was) leaked, on every upload of
 * such a path. */
static void tar_name_leak(void)
{
    char name[64];
    void *tar = NULL;
    size_t tl = 0, before, after;
    char err[256] = "";
    int rc = 0;

    memset(name, 'L', 20);
    memset(name + 20, 0xfc, 40);
    name[60] = '\0';
    before = heap_in_use();
    for (int i = 0; i < 100; i++)
        rc |= dk_tar_file(name, "data", 4, 0644, &tar, &tl, err, sizeof err);
    after = heap_in_use();
    ok(rc != 0 && tar == NULL && strstr(err, "making the tar of"),
       "docker: a tar of an unwritable name fails and says why");
    if (before)
        ok(after < before + 100 * 1024, "docker: ... and leaks nothing (heap %zu -> %zu bytes "
           "over 100 tries)", before, after);
    else
        ok(1, "docker: ... and leaks nothing (left to LSan: not glibc's allocator) # SKIP");
}
#endif

int main(void)
{
#if HAVE_FZ_DOCKER
    tar_name_leak();
#endif
    return tap_done();
}
