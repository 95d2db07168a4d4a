/* core/server/ws-signal.c - a WebSocket session's signals for its running
 * exec, shared by the native exec/ws and Piston's /api/v2/connect: each
 * signal a client sends is a byte in a pipe the provider reads
 * (sbx_exec_opts_set_signal_fd) where it delivers signals (SBX_CAP_SIGNAL);
 * what cannot be delivered is said, never dropped.  SIGKILL is not here:
 * it is the request's cancel, on any provider.
 */
#include "config.h"

#include <stdio.h>

#include "compat.h"
#include "ws.h"

void srv_ws_signals_open(srv_ws_signals *s, sbx_ctx *ctx, const char *provider,
                         sbx_exec_opts *x)
{
    const sbx_provider *p = provider ? sbx_ctx_find_provider(ctx, provider) : NULL;

    s->pipe.rfd = s->pipe.wfd = -1;
    s->provider = provider;
    /* Without the pipe the session says the signals cannot be delivered
     * (as without the capability): never an exec refused for it. */
    if (p && (sbx_provider_capabilities(p) & SBX_CAP_SIGNAL) &&
        srv_ws_stdin_open(&s->pipe) == 0)
        sbx_exec_opts_set_signal_fd(x, s->pipe.rfd);
}

int srv_ws_signals_send(srv_ws_signals *s, int sig, const char *name, char *why, size_t n)
{
    unsigned char b = (unsigned char)sig;

    if (s->pipe.wfd < 0) {
        snprintf(why, n, "%s cannot be delivered: provider %s cannot signal a running "
                 "program (no signal capability)", name, s->provider ? s->provider : "(none)");
        return SRV_SIG_NO_CAP;
    }
    if (!sbx_signal_deliverable(sig)) {
        snprintf(why, n, "%s cannot be delivered to a running program: SIGKILL, SIGHUP, "
                 "SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM, SIGALRM and SIGWINCH can", name);
        return SRV_SIG_REFUSED;
    }
    if (srv_ws_stdin_write(&s->pipe, &b, 1) != 0) {
        snprintf(why, n, "%s could not be delivered: the program takes no more signals", name);
        return SRV_SIG_REFUSED;
    }
    return SRV_SIG_SENT;
}

void srv_ws_signals_free(srv_ws_signals *s)
{
    srv_ws_stdin_free(&s->pipe);
}
