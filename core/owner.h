/* core/owner.h - ownership and permission checks of paths (core/owner.c)
 */
#ifndef POLYSANDBOX_OWNER_H
#define POLYSANDBOX_OWNER_H

#include <stddef.h>
#include <sys/types.h>

struct stat;
/* "uid N (name)" into @buf. */
void core_owner_name(uid_t uid, char *buf, size_t size);
/* @path with every link resolved (malloc'd), or NULL with errno set. */
char *core_canonical(const char *path);
/* @st (of @path, a @what such as "provider module") owned by root or this
 * user and not writable by group or others; else error @code naming the
 * path, the owner and the fix. */
int core_owner_check(const struct stat *st, const char *path, const char *what, int code);
/* Every directory holding @path (links resolved), from /: owned by root
 * or this user, not writable by group or others unless sticky. */
int core_owner_check_parents(const char *path, const char *what, int code);
/* @path made (0700, parents too) when missing, then required to be a
 * directory (not a link) of this user's, 0700 (0755 is tightened; group-
 * or world-writable is refused), in safe parents; SBX_E_PERM naming the
 * path and its owner otherwise. */
int core_private_dir(const char *path, const char *what);

#endif /* POLYSANDBOX_OWNER_H */
