/* plugins/docker/docker-initvol.c - the helper's shared volume
 *
 * The helper (init/init.c, a static program embedded in this module) is
 * installed once per daemon into a named volume "polysandbox-init-<hash of
 * the helper>", which every sandbox mounts read-only at /.sbx-init: the
 * sandbox can neither change it nor see it change.  Installing works on a
 * remote daemon too: a short-lived container (any image: the helper is
 * static) mounts the volume, receives the helper through the archive API
 * under a temporary name, and renames it into place (atomic).  That
 * container's name is the volume's name, so two installers cannot race
 * (the second create gets 409 and waits), and it stays, exited with 0, as
 * the mark that the volume is complete.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker-int.h"
#include "init/docker-init.h"

/* The helper's bytes, built by plugins/docker/local.mk. */
SBX_EMBED(dk_init_blob, DK_INIT_BIN);

static void volume_name(char out[64])
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    /* cppcheck-suppress comparePointers ; the linker's start and end of one blob */
    for (const unsigned char *b = dk_init_blob; b < dk_init_blob_end; b++)
        h = (h ^ *b) * UINT64_C(0x100000001b3);
    snprintf(out, 64, "polysandbox-init-%016llx", (unsigned long long)h);
}

/* 1 complete, 0 absent, 2 being installed, 3 failed; or minus a status. */
static int marker_state(struct dk_prov *p)
{
    char path[160], err[PH_ERR_MAX];
    long status = 0;
    json_t *ans = NULL;
    snprintf(path, sizeof path, DK_API "/containers/%s/json", p->init_volume);
    int ret = dk_json(&p->eng, "GET", path, NULL, 30000, &status, &ans, err);
    if (status == 404) {
        json_decref(ans);
        return 0;
    }
    if (ret) {
        json_decref(ans);
        return -dk_err(&p->eng, ret, "checking the helper volume on %s: %s", p->eng.socket, err);
    }
    json_t *st = json_object_get(ans, "State");
    const char *s = json_string_value(json_object_get(st, "Status"));
    json_int_t code = json_integer_value(json_object_get(st, "ExitCode"));
    int r = s && !strcmp(s, "exited") ? (code == 0 ? 1 : 3) : s && !strcmp(s, "created") ? 2
          : s && !strcmp(s, "running") ? 2 : 3;
    json_decref(ans);
    if (r == 1) {
        /* The mark stays even if someone pruned the volume: check it. */
        snprintf(path, sizeof path, DK_API "/volumes/%s", p->init_volume);
        ret = dk_json(&p->eng, "GET", path, NULL, 30000, &status, &ans, err);
        json_decref(ans);
        if (status == 404)
            r = 3;
        else if (ret)
            return -dk_err(&p->eng, ret, "checking the helper volume on %s: %s", p->eng.socket,
                           err);
    }
    return r;
}

static int remove_marker(struct dk_prov *p)
{
    char path[160], err[PH_ERR_MAX];
    long status = 0;
    snprintf(path, sizeof path, DK_API "/containers/%s?force=1", p->init_volume);
    int ret = dk_json(&p->eng, "DELETE", path, NULL, 30000, &status, NULL, err);
    if (ret && status != 404)
        return dk_err(&p->eng, ret, "removing the helper's installer %s: %s", p->init_volume, err);
    return SBX_OK;
}

static int install(struct dk_prov *p, const char *image)
{
    char path[200], err[PH_ERR_MAX];
    long status = 0;
    json_t *body = json_pack("{s:s, s:[s], s:[s,s,s], s:{s:s}, s:b, s:{s:s, s:[{s:s, s:s, s:s}]}}",
                             "Image", image, "Entrypoint", DK_INIT_DIR "/init.new", "Cmd",
                             "--install", DK_INIT_DIR "/init.new", DK_INIT_PATH, "Labels",
                             DK_LABEL_PREFIX "init", "1", "NetworkDisabled", 1, "HostConfig",
                             "NetworkMode", "none", "Mounts", "Type", "volume", "Source",
                             p->init_volume, "Target", DK_INIT_DIR);
    if (!body)
        return dk_err(&p->eng, SBX_E_NOMEM, "out of memory");
    snprintf(path, sizeof path, DK_API "/containers/create?name=%s", p->init_volume);
    int ret = dk_json(&p->eng, "POST", path, body, 60000, &status, NULL, err);
    bool pulled = false;
    if (ret && status == 404 && p->pull.policy == DK_PULL_MISSING) {
        /* The image's first use on this daemon: pull it (engine/pull.c). */
        if ((ret = dk_pull(&p->pull, image))) {
            json_decref(body);
            return ret;
        }
        pulled = true;
        ret = dk_json(&p->eng, "POST", path, body, 60000, &status, NULL, err);
    }
    json_decref(body);
    if (status == 409)
        return SBX_E_EXISTS; /* another process installs: wait for it */
    if (status == 404)
        return dk_err(&p->eng, SBX_E_NOT_FOUND, "image '%s' is not on the daemon %s%s: %s", image,
                      p->eng.socket, pulled ? " even after a pull"
                      : p->pull.policy == DK_PULL_NEVER ? " and providers.d/docker.ini says pull "
                      "= never (docker pull or docker import it first)" : "", err);
    if (ret)
        return dk_err(&p->eng, ret, "installing the helper on %s: %s", p->eng.socket, err);

    void *tar = NULL;
    size_t tar_len = 0;
    /* cppcheck-suppress comparePointers ; the linker's start and end of one blob */
    ret = dk_tar_file("init.new", dk_init_blob, (size_t)(dk_init_blob_end - dk_init_blob), 0755,
                      &tar, &tar_len, err, sizeof err);
    if (ret) {
        remove_marker(p);
        return dk_err(&p->eng, ret, "installing the helper: %s", err);
    }
    snprintf(path, sizeof path, DK_API "/containers/%s/archive?path=" DK_INIT_DIR, p->init_volume);
    ph_request rq = {.method = "PUT", .path = path, .body = tar, .body_len = tar_len,
                     .content_type = "application/x-tar", .timeout_ms = 60000};
    ph_response resp;
    ret = ph_do(p->eng.http, &rq, &resp, err);
    free(tar);
    if (!ret && resp.status != 200)
        ret = ph_status_code(resp.status) ? ph_status_code(resp.status) : SBX_E_BACKEND;
    ph_response_clear(&resp);
    if (ret) {
        remove_marker(p);
        return dk_err(&p->eng, ret, "copying the helper into volume %s: %s", p->init_volume, err);
    }
    json_t *ans = NULL;
    snprintf(path, sizeof path, DK_API "/containers/%s/start", p->init_volume);
    ret = dk_json(&p->eng, "POST", path, NULL, 60000, &status, NULL, err);
    if (!ret) {
        snprintf(path, sizeof path, DK_API "/containers/%s/wait", p->init_volume);
        ret = dk_json(&p->eng, "POST", path, NULL, 60000, &status, &ans, err);
    }
    json_int_t code = ret ? -1 : json_integer_value(json_object_get(ans, "StatusCode"));
    json_decref(ans);
    if (ret || code != 0) {
        remove_marker(p);
        return dk_err(&p->eng, ret ? ret : SBX_E_BACKEND, "running the helper's installer in image "
                      "'%s': %s", image, ret ? err : "it failed (is the image for this "
                      "machine's architecture?)");
    }
    return SBX_OK;
}

/* Podman takes the profile as a file (docker-seccomp.c). */
static int podman_seccomp(struct dk_prov *p)
{
    char err[PH_ERR_MAX];
    char *opt = dk_seccomp_file(p->seccomp_dir, sizeof p->seccomp_dir, err, sizeof err);
    if (!opt)
        return dk_err(&p->eng, strstr(err, "out of memory") ? SBX_E_NOMEM : SBX_E_IO, "%s", err);
    free(p->seccomp_opt);
    p->seccomp_opt = opt;
    return SBX_OK;
}

int dk_init_ensure(struct dk_prov *p, const char *image)
{
    int ret = SBX_OK;
    pthread_mutex_lock(&p->init_lock);
    if (p->init_ready)
        goto out;
    if (!p->init_volume[0]) {
        if ((ret = dk_probe(&p->eng)) || (p->eng.podman && (ret = podman_seccomp(p))))
            goto out;
        volume_name(p->init_volume);
    }
    for (int tries = 0; tries < 300; tries++) {
        int st = marker_state(p);
        if (st < 0) {
            ret = -st;
            goto out;
        }
        if (st == 1) {
            /* Installed (by us or by a concurrent installer whose
             * container made our install answer SBX_E_EXISTS). */
            ret = SBX_OK;
            p->init_ready = true;
            goto out;
        }
        if (st == 3 && (ret = remove_marker(p)))
            goto out;
        if (st == 0 || st == 3) {
            ret = install(p, image);
            if (ret == SBX_OK) {
                p->init_ready = true;
                goto out;
            }
            if (ret != SBX_E_EXISTS)
                goto out;
        }
        /* Someone else installs: give it time. */
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    ret = dk_err(&p->eng, SBX_E_TIMEOUT,
                 "the helper volume %s was not installed within 30 s (remove "
                 "the container %s if an installer was interrupted)", p->init_volume,
                 p->init_volume);
out:
    pthread_mutex_unlock(&p->init_lock);
    return ret;
}
