/* plugins/microvm/mv-int.h - what the microvm provider's files share */
#ifndef POLYSANDBOX_MV_INT_H
#define POLYSANDBOX_MV_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <polysandbox/provider.h>

#include "mv-proto.h"
#include "mv-vmm.h"

struct mv_prov {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    const struct mv_vmm *vmm;
    char *binary, *kernel, *initrd;
    char *accel;             /* setting: auto, kvm or tcg */
    uint64_t memory_mib;
    uint64_t boot_timeout_ms;
    uint64_t kvm_probe_ms;
};

struct mv_sandbox {
    pid_t pid;               /* the VMM */
    int chan;                /* our end of the agent's channel */
    char *dir;               /* console and VMM logs; removed at destroy */
    uint32_t unenforced;     /* limits the guest said it cannot apply */
    const char *accel;       /* static: "kvm" or "tcg" */
    sbx_limits_v1 limits;    /* of create */
    char *env;               /* create's environment: "KEY=VALUE\0" each */
    size_t env_len, n_env;
    int broken;              /* the channel is out of step: no more execs */
};

/* mv-chan.c: frames over the channel, within a deadline (CLOCK_MONOTONIC
 * ms; 0 = none).  Return SBX_OK or an error set on the host. */
int mv_chan_send(struct mv_prov *p, int fd, uint8_t type, const void *a, size_t alen,
                 const void *b, size_t blen);
/* Reads one frame from the guest: *payload (transfer full, malloc, NUL
 * after the bytes) and its header.  SBX_E_TIMEOUT at the deadline,
 * SBX_E_BACKEND on a frame that breaks the protocol or a closed channel. */
int mv_chan_recv(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_hdr *hd,
                 uint8_t **payload);
int64_t mv_now_ms(void);
/* Reads the agent's first frame, its HELLO.  *answered: whether any frame
 * came (else the VM stopped or timed out before its agent spoke). */
int mv_chan_hello(struct mv_prov *p, int fd, int64_t deadline_ms, struct mv_hello *hl,
                  int *answered);
/* Sets the error an ERROR frame @pl of @len bytes names (its code mapped
 * to SBX_E_*, its text made printable) about @what, and returns it. */
int mv_chan_error(struct mv_prov *p, const char *what, const uint8_t *pl, size_t len);

/* mv-exec.c */
int mv_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);

/* mv-files.c: the SBX_CAP_FILES slots, and one FILE placed (answered). */
int mv_put_file(struct mv_prov *p, struct mv_sandbox *s, const char *path, const void *data,
                size_t len, uint32_t mode);
int mv_upload(void *prov, void *sb, const char *path, const void *data, size_t len,
              uint32_t mode);
int mv_download(void *prov, void *sb, const char *path, size_t max, void **data,
                size_t *len);

/* mv-accel.c: the accelerator to use, "kvm" or "tcg", and why. */
const char *mv_accel_choose(struct mv_prov *p, char *why, size_t whylen);
/* Records what a KVM boot showed, for the next choose. */
void mv_accel_record(struct mv_prov *p, int kvm_boots);

/* microvm.c: boots one VM with @accel and waits for the agent's hello
 * within @timeout_ms. */
int mv_boot(struct mv_prov *p, const char *accel, uint64_t timeout_ms, uint64_t disk_bytes,
            struct mv_sandbox **out);
void mv_sandbox_free(struct mv_sandbox *s);

#endif
