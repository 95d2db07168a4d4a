/* plugins/docker/exec/xrun.h - one exec's bookkeeping, shared by the two
 * exec modes (exec.c); inside exec/ only
 */
#ifndef DOCKER_XRUN_H
#define DOCKER_XRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/exec.h"

enum dk_why_kill { WK_NONE, WK_OUTPUT, WK_BACKSTOP, WK_CANCEL };
struct dk_xrun {
    struct dk_engine *e;
    const sbx_exec_spec_v1 *spec;
    const sbx_output_sink_v1 *sink;
    sbx_exec_outcome_v1 *out;
    bool stop;              /* deliver nothing more */
    enum dk_why_kill kill;
    bool kill_sent;
    unsigned char *snd;     /* bytes still to send */
    size_t snd_len, snd_off;
    /* Streamed stdin (spec->stdin_fd): read while in_open, once what was
     * read before is sent; signals (spec->signal_fd) while sig_open.
     * push queues a control frame to the helper the way this exec path
     * talks to it: 'D' a chunk of stdin, 'E' its end, 'S' signals. */
    bool in_open, sig_open;
    int (*push)(struct dk_xrun *r, char type, const void *data, size_t len);
    uint64_t id;            /* the served exec's id (attach.c) */
};
/* Poll @fd for the exec's connection with @events, and the spec's
 * cancel_fd while nothing was killed yet: a readable cancel_fd sets
 * r->kill = WK_CANCEL; its stdin_fd and signal_fd, whose bytes go to
 * r->push.  Returns poll's result for @fd (revents in *revents). */
int dk_xrun_poll(struct dk_xrun *r, int fd, short events, int timeout_ms, short *revents);
/* Start streaming spec->stdin_fd and spec->signal_fd, those set, as
 * control frames through @push (once the request is queued). */
void dk_xrun_control(struct dk_xrun *r,
                     int (*push)(struct dk_xrun *, char, const void *, size_t));
/* After the exec's loop: SBX_E_CANCELLED when it was cancelled, else 0. */
int dk_xrun_cancelled(struct dk_xrun *r, const char *id);
/* Sends what of r->snd the connection @h takes now; false when the
 * connection failed (not when it is merely full). */
bool dk_xrun_send(struct dk_xrun *r, CURL *h);
/* Delivers output under the caps (a dk_out_fn); sets r->kill past one. */
int dk_xrun_output(void *ud, int stream, const void *buf, size_t n);
/* The helper's report as the outcome (or an error for setup failures). */
int dk_xrun_report(struct dk_xrun *r, struct dk_sb *sb, const struct dk_report *rep);
/* The wrapper's command line for @spec: a JSON array of strings. */
json_t *dk_build_cmd(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                     int *err_code);
int dk_env_check(struct dk_engine *e, const sbx_exec_spec_v1 *spec);

/* ---- api.c: the daemon's exec ---- */
/* Runs @spec through a new exec of the daemon; @nonce marks the report. */
int dk_api_exec(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out, const char *nonce);

/* ---- attach.c: execs through the attach connection ---- */
/* Returned by dk_serve_exec when the exec should take the API path (the
 * sandbox is busy with another process's exec). */
#define DK_USE_API (-1)
int dk_serve_exec(struct dk_engine *e, struct dk_sb *sb, const sbx_exec_spec_v1 *spec,
                  const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);

#endif /* DOCKER_XRUN_H */
