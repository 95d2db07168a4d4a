/* plugins/docker/exec/conn.h - the attach connection to a sandbox's exec
 * server (conn.c), as attach.c drives it; inside exec/ only
 */
#ifndef DOCKER_CONN_H
#define DOCKER_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/xrun.h"
#include "init/proto.h"

struct dk_conn {
    CURL *h;
    curl_socket_t fd;
    struct dk_demux dm;            /* Docker's 8-byte frames */
    char head[4096];               /* the HTTP answer's head */
    size_t head_len;
    bool head_done;
    long status;
    /* The server's frames. */
    unsigned char hdr[SRV_HDR];
    size_t hdr_got;
    char type;
    uint64_t id;
    size_t left;
    char text[512];                /* 'X', 'L', 'Z' payloads */
    size_t text_len;
    /* The exec under way. */
    uint64_t cur;
    struct dk_xrun *r;
    bool done, lost, desync;
    /* Finding our place in the output (after a probe). */
    bool scanning;
    unsigned char want[SRV_HDR];   /* the probe's answer */
    unsigned char win[SRV_HDR];    /* the last bytes seen */
    size_t win_len;
    char msg[512];
    struct dk_report rep;
    bool eof;
};

/* Opens the attach connection of @sb and finds its place in both
 * streams (init/proto.h); sets the error on failure. */
int dk_conn_open(struct dk_engine *e, struct dk_sb *sb, struct dk_conn **out);
void dk_conn_free(struct dk_conn *c);
/* Reads what the connection has (the frames of c->r's exec go to it);
 * false at its end. */
bool dk_conn_read(struct dk_conn *c);
/* The connection is still open and in step (drains what came meanwhile:
 * output of other processes' execs). */
bool dk_conn_usable(struct dk_conn *c);

/* The container's state, as GET /containers/ID/json tells it. */
struct sb_state {
    int ret;        /* SBX_OK, or why the inspection failed (in err) */
    long status;    /* the HTTP status: 404 when the container is gone */
    bool running, oom;
    long long code; /* the exit code of its first process, when stopped */
    char err[PH_ERR_MAX];
};
void dk_inspect_state(struct dk_engine *e, struct dk_sb *sb, struct sb_state *st);

#endif /* DOCKER_CONN_H */
