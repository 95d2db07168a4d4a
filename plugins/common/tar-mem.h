/* plugins/common/tar-mem.h - a libarchive writer into memory, for the
 * providers that send files as tar streams (docker, kubernetes)
 */
#ifndef PC_TAR_MEM_H
#define PC_TAR_MEM_H

#include <stddef.h>

#include <archive.h>

/* What was written: @p (malloc'd, the caller's to free) of @len bytes. */
typedef struct pc_membuf {
    unsigned char *p;
    size_t len, cap;
} pc_membuf;

/* The write callback of archive_write_open2 with a pc_membuf as @ud:
 * appends, growing by doubling; -1 with ENOMEM set on @a when out of
 * memory. */
la_ssize_t pc_tar_mem_write(struct archive *a, void *ud, const void *buf, size_t n);

#endif
