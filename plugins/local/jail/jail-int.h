/* plugins/local/jail/jail-int.h - what the files of jail/ share
 *
 * Async-signal-safe helpers and the init's failure report, for child.c,
 * root*.c and payload.c only (prefix lcl_j_).  Launchers include jail.h.
 */
#ifndef LCL_JAIL_INT_H
#define LCL_JAIL_INT_H

#include "jail.h"
#include "../wire/fdpass.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The kernel's struct mount_attr (older headers may lack it). */
struct lcl_mount_attr {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* ---- child.c: async-signal-safe helpers, the report, binds ---- */
size_t lcl_j_len(const char *s);
/* dst = a b c (any may be NULL); false if it does not fit. */
bool lcl_j_cat3(char *dst, size_t size, const char *a, const char *b, const char *c);
/* A struct lcl_msg of @kind to @fd: @err and "@step @path". */
void lcl_j_report(int fd, int kind, int err, const char *step, const char *path);
/* The setup failed at @step (errno says why): reported, then _exit(125). */
_Noreturn void lcl_j_fail(const struct lcl_child *c, const char *step, const char *path);
/* Read-only/nosuid/nodev/noexec (MOUNT_ATTR_*) on the mount at @path:
 * 0, or -1 with errno set. */
int lcl_j_set_attr(const char *path, uint64_t attr, bool recursive);
/* @src bound at @dst with @attr (0: none); fails the setup on error. */
void lcl_j_bind(const struct lcl_child *c, const char *src, const char *dst, uint64_t attr,
                bool recursive);
/* The sandbox's work directory bound at @dst (no link followed). */
void lcl_j_bind_work(const struct lcl_child *c, const char *dst);

/* ---- root.c, root-image.c, root-skel.c ---- */
/* After the go (lcl_child_setup): groups, cgroup namespace, the root,
 * host name, loopback.  @work: the work directory's mount the go
 * brought (c->work_by_sync; closed once attached), or -1: bound by
 * path.  The old root is left to detach. */
void lcl_child_root(const struct lcl_child *c, int work);
#define LCL_J_NDEV 6
extern const char *const lcl_j_dev_nodes[LCL_J_NDEV];
/* The image's top level bound read-only at @root (c->sb->rootfs). */
void lcl_j_image_root(const struct lcl_child *c, const char *root);
/* The skeleton and the host's binds at @root (no image). */
void lcl_j_skel_tree(const struct lcl_child *c, const char *root);

/* ---- payload.c ---- */
struct lcl_j_payload_arg {
    const struct lcl_child *c;
    int detached;           /* read end */
    int detach_w;           /* the init's write end: ours is closed */
    int execd_r;            /* the init's read end of "we executed" */
};
/* The ends of pipe @p moved above 0-2 (the payload's stdio): 0 or -1. */
int lcl_j_above_stdio(int p[2]);
/* The payload's clone entry: @arg is a struct lcl_j_payload_arg. */
int lcl_j_payload_main(void *arg);

#endif /* LCL_JAIL_INT_H */
