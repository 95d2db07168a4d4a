/* core/server/ws.h - a WebSocket session on a worker (ws.c) */
#ifndef POLYSANDBOX_SERVER_WS_H
#define POLYSANDBOX_SERVER_WS_H

#include "server.h"
#include "ws-frame.h"

typedef struct srv_ws srv_ws;

/* How a route family refuses a handshake, in its own error shape. */
typedef void (*srv_ws_refuse)(srv_req *r, unsigned status, const char *message);

/* In a worker route's handler: check the handshake (400, 426 through
 * @refuse), answer 101 and take the connection over.  NULL when it
 * could not be (having replied, or the client left). */
srv_ws *srv_ws_upgrade(srv_req *r, srv_ws_refuse refuse);

/* Send one frame (any thread; one frame at a time): 0, or -1 when the
 * peer is gone or the session closing. */
int srv_ws_send(srv_ws *ws, int opcode, const void *data, size_t len);
/* A text message of @j's compact JSON (j decref'd). */
int srv_ws_send_json(srv_ws *ws, json_t *j);
/* Our close frame with @code and @reason (cut to fit). */
int srv_ws_send_close(srv_ws *ws, uint16_t code, const char *reason);

enum { SRV_WS_MESSAGE = 1, SRV_WS_CLOSED = 0, SRV_WS_ERROR = -1, SRV_WS_TIMEOUT = -2 };
/* The next text or binary message within @timeout_ms (-1: no bound);
 * pings are answered, a close is echoed.  One receiving thread at a
 * time; *data is valid until its next call.  MESSAGE, CLOSED (the peer
 * closed or left), ERROR (a protocol violation: we closed), TIMEOUT. */
int srv_ws_recv(srv_ws *ws, int timeout_ms, int *opcode, const unsigned char **data,
                size_t *len);
/* True once the peer closed or left. */
bool srv_ws_closed(const srv_ws *ws);
/* A receiving thread for the session: @cb gets each message, parsed
 * when it is JSON text (NULL otherwise; borrowed), and returns non-zero
 * to stop receiving.  When the peer closes, leaves or breaks the
 * protocol, the thread fires the request's cancel and ends. */
typedef int (*srv_ws_message_cb)(void *ud, json_t *msg);
int srv_ws_reader_start(srv_ws *ws, srv_ws_message_cb cb, void *ud);
void srv_ws_reader_stop(srv_ws *ws);
/* A pipe feeding an exec's stdin from the session while it runs
 * (sbx_exec_opts_set_stdin_fd with rfd), written by one thread; also its
 * signals, a byte each (sbx_exec_opts_set_signal_fd). */
typedef struct srv_ws_stdin {
    int rfd, wfd;             /* -1 when closed */
} srv_ws_stdin;
/* 0, or -1 (errno). */
int srv_ws_stdin_open(srv_ws_stdin *in);
/* Write all of @data, waiting up to 5 s while the program does not read:
 * 0, or -1 (EPIPE: closed; EAGAIN: the program does not read). */
int srv_ws_stdin_write(srv_ws_stdin *in, const void *data, size_t len);
/* The program sees end of file. */
void srv_ws_stdin_close(srv_ws_stdin *in);
void srv_ws_stdin_free(srv_ws_stdin *in);

/* A session's signals for its running exec (ws-signal.c): a pipe whose
 * bytes the provider delivers to the program's process group, where it
 * can (SBX_CAP_SIGNAL).  SIGKILL is the request's cancel, not this. */
typedef struct srv_ws_signals {
    srv_ws_stdin pipe;        /* wfd -1: the provider cannot deliver */
    const char *provider;     /* borrowed, for messages; NULL: none */
} srv_ws_signals;
/* Give @x the pipe where @provider (a name in @ctx, or NULL) has the
 * signal capability; otherwise signals will be answered NO_CAP. */
void srv_ws_signals_open(srv_ws_signals *s, sbx_ctx *ctx, const char *provider,
                         sbx_exec_opts *x);
enum { SRV_SIG_SENT = 0, SRV_SIG_REFUSED = -1, SRV_SIG_NO_CAP = -2 };
/* @sig (named @name; not SIGKILL) to the program: SENT; NO_CAP when the
 * provider cannot deliver signals; REFUSED when this one cannot be
 * delivered or the program takes no more.  Other than SENT, @why (@n
 * bytes) says so, naming the signal (and the provider). */
int srv_ws_signals_send(srv_ws_signals *s, int sig, const char *name, char *why, size_t n);
void srv_ws_signals_free(srv_ws_signals *s);

/* Stop the receiving thread, close (@code, @reason) unless closed
 * already, wait briefly for the peer's close, give the socket back and
 * free @ws. */
void srv_ws_end(srv_ws *ws, uint16_t code, const char *reason);

#endif
