/* plugins/local/wire/zygote-proto.h - the request a zygote's child is given
 *
 * Shared by the supervisor (launch/zygote.c), which writes it, and the
 * zygote's helper library (zygote/helper.c), which reads it.  Once,
 * when the zygote starts, before its imports: the layout of the root it
 * builds and keeps (one SOCK_SEQPACKET message):
 *
 *   struct lcl_zyg_layout
 *   the strings skel (where the root is built), skel_src (the shared
 *   skeleton), then n_binds bind paths, then n_masks paths of ours to
 *   cover (lcl_prov.masks), NUL-terminated each
 *
 * Then one message per exec:
 *
 *   struct lcl_zyg_req
 *   argv strings (the program's: script, arguments), NUL-terminated
 *   environment strings "K=V", NUL-terminated
 *   the child's part: struct lcl_zyg_cpart, then the strings cwd,
 *     tmp_opts, NUL-terminated each, then bpf_len struct sock_filter
 *
 * with SCM_RIGHTS descriptors in the order of enum lcl_zyg_fd (the work
 * directory a detached copy of its mount, open_tree), then one per bit
 * of tasks_mask (v1 cgroup tasks files), then one per bit of leave_mask
 * (the tasks files of those cgroups' parents).  Native byte order: both
 * ends are this host.
 */
#ifndef LOCAL_ZYGOTE_H
#define LOCAL_ZYGOTE_H

#include <stdint.h>

#define LCL_ZYG_MAGIC UINT32_C(0x5a594733) /* "ZYG3" */
#define LCL_ZYG_LAYOUT_MAGIC UINT32_C(0x5a594c32) /* "ZYL2" */
#define LCL_ZYG_HELLO "polysandbox-zygote-ready"

struct lcl_zyg_layout {
    uint32_t magic;
    uint32_t n_binds;
    uint32_t n_masks;
    uint32_t pad;
};

struct lcl_zyg_req {
    uint32_t magic;
    uint32_t n_argv, n_env;
    uint32_t strs_len;      /* bytes of the argv and environment strings */
    uint32_t c_len;         /* bytes of the child's part after them */
};

enum { LCL_ZYG_F_DROP_GROUPS = 1, LCL_ZYG_F_NET_NONE = 2 };

struct lcl_zyg_cpart {
    uint32_t flags;         /* LCL_ZYG_F_* */
    int32_t cap_last;
    uint64_t cpu_ns, nofile, fsize_bytes;
    uint32_t bpf_len;       /* instructions */
    uint32_t tasks_mask;    /* bit i: a tasks file of controller i follows */
    uint32_t leave_mask;    /* 0 or tasks_mask: then the tasks file of each one's
                             * parent follows, for the init to leave the exec's
                             * cgroups once its sandbox is empty, before the status */
    uint32_t pad;
    uint64_t rl_data, rl_nproc; /* the payload's floors, or 0 (jail/limits.c) */
};

enum lcl_zyg_fd {
    LCL_ZYG_FD_IN, LCL_ZYG_FD_OUT, LCL_ZYG_FD_ERR, LCL_ZYG_FD_SYNC, LCL_ZYG_FD_REPORT,
    LCL_ZYG_FD_STATUS, LCL_ZYG_FD_WORK, LCL_ZYG_NFD
};

#endif /* LOCAL_ZYGOTE_H */
