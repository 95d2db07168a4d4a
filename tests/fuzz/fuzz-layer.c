/* tests/fuzz/fuzz-layer.c - image layers unpacked into a root
 * (core/image/unpack.c over libarchive): names, whiteouts, opaque
 * directories, links
 *
 * The input is up to four layers (split at "\n@@@@\n", each a tar, plain
 * or compressed), applied in order to one root inside a cage directory
 * that also holds a directory "outside" with one file.  Beyond not
 * crashing: whatever the layers say, nothing appears in the cage but the
 * root and "outside", "outside" keeps its one file unchanged (content
 * and link count), the root holds no device node, FIFO, socket, setuid
 * or setgid file, and the store can remove the root.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <polysandbox/sandbox.h>

#include "fuzz.h"
#include "error.h"
#include "image/image-int.h"

static int bad_entry(const char *p, const struct stat *st, int type, struct FTW *f)
{
    (void)type, (void)f;
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode))
        fz_fail("'%s' is neither a file, a directory nor a symbolic link", p);
    if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)))
        fz_fail("'%s' kept a setuid or setgid bit", p);
    return 0;
}

static const char *const cage_allows[] = { "root", "layer*", NULL };

static int one(const uint8_t *data, size_t size)
{
    char *made = fz_path("cage");
    char root[4200], path[4200];
    img_rmtree(made);
    fz_cage_make("cage");
    /* Resolved, as the store's are: libarchive refuses any link on the way. */
    char *cage = realpath(made, NULL);
    free(made);
    if (!cage)
        abort();
    snprintf(root, sizeof root, "%s/root", cage);
    if (mkdir(root, 0755) != 0)
        abort();
    fz_part parts[4];
    size_t n = fz_split(data, size, parts, 4);
    for (size_t i = 0; i < n; i++) {
        char rel[32];
        snprintf(rel, sizeof rel, "cage/layer%zu", i);
        fz_write(rel, parts[i].p, parts[i].len);
        snprintf(path, sizeof path, "%s/layer%zu", cage, i);
        if (img_unpack_layer(path, root, "fuzz layer") != SBX_OK)
            break;                      /* a refused layer ends the pull */
    }
    fz_cage_check(cage, cage_allows);
    nftw(root, bad_entry, 16, FTW_PHYS);
    if (img_rmtree(root) != SBX_OK)
        fz_fail("the root cannot be removed: %s", sbx_error_message(sbx_ctx_last_error(NULL)));
    img_rmtree(cage);
    core_error_clear();
    free(cage);
    return 0;
}

FZ_TARGET(layer, NULL, one)
