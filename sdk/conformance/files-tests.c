/* sdk/conformance/files-tests.c - upload and download: round trip,
 * missing files, unsafe paths, links the sandbox made; listing */
#include "config.h"

#include "kit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOB_LEN (256 * KIB + 7)

static void expect_message(conf_kit *k, conf_case *c, const char *call)
{
    const sbx_error *e = sbx_ctx_last_error(k->ctx);
    const char *msg = e ? sbx_error_message(e) : NULL;
    if (msg == NULL || *msg == '\0')
        conf_fail(c, "%s failed without an error message", call);
    else
        conf_note(c, "%s: \"%s\"", call, msg);
}

static void t_files_roundtrip(conf_kit *k, conf_case *c)
{
    unsigned char *blob = malloc(BLOB_LEN);
    void *data = NULL;
    size_t len = 0;
    sbx_result *r = NULL;
    sbx_sandbox *sb = NULL;
    if (blob == NULL) {
        conf_fail(c, "out of memory");
        return;
    }
    conf_fill_random(blob, BLOB_LEN, UINT64_C(0xf11e5f11e5));
    sb = conf_box(k, c, NULL, false);
    if (sb == NULL)
        goto out;
    int rc = sbx_sandbox_upload(sb, "dir/blob.bin", blob, BLOB_LEN, 0644);
    if (!conf_expect_rc(k, c, "sbx_sandbox_upload(\"dir/blob.bin\")", SBX_OK,
                        rc))
        goto out;
    /* The command sees what was uploaded... */
    r = conf_exec_shell(k, c, sb, "wc -c < dir/blob.bin | tr -d ' '");
    if (r != NULL && conf_expect_status(c, "wc -c", SBX_RUN_OK, r)) {
        char want[32];
        snprintf(want, sizeof want, "%zu\n", (size_t)BLOB_LEN);
        conf_expect_stdout(c, "size of the uploaded file inside", want, r);
    }
    /* ...and download gives back every byte. */
    rc = sbx_sandbox_download(sb, "dir/blob.bin", 4 * MIB, &data, &len);
    if (conf_expect_rc(k, c, "sbx_sandbox_download(\"dir/blob.bin\")", SBX_OK,
                       rc))
        conf_expect_bytes(c, "downloaded bytes", blob, BLOB_LEN, data, len);
    free(data);
    data = NULL;

    /* A file the command wrote comes back too. */
    sbx_result_free(r);
    r = conf_exec_shell(k, c, sb, "printf 'made\\000inside' > made.bin");
    if (r != NULL && conf_expect_status(c, "printf > made.bin", SBX_RUN_OK, r)) {
        rc = sbx_sandbox_download(sb, "made.bin", 4 * MIB, &data, &len);
        if (conf_expect_rc(k, c, "sbx_sandbox_download(\"made.bin\")", SBX_OK,
                           rc))
            conf_expect_bytes(c, "file written by the command",
                              "made\0inside", 11, data, len);
    }
    /* The mode given is the mode the command sees. */
    sbx_result_free(r);
    r = NULL;
    static const char script[] = "#!/bin/sh\necho ran\n";
    rc = sbx_sandbox_upload(sb, "bin/run.sh", script, sizeof script - 1, 0755);
    if (conf_expect_rc(k, c, "sbx_sandbox_upload(\"bin/run.sh\", 0755)",
                       SBX_OK, rc)) {
        static const char *const argv[] = {"./bin/run.sh", NULL};
        sbx_exec_opts *x = conf_xargv(c, argv);
        r = conf_exec(k, c, sb, x);
        sbx_exec_opts_free(x);
        if (r != NULL &&
            conf_expect_status(c, "./bin/run.sh uploaded with mode 0755",
                               SBX_RUN_OK, r))
            conf_expect_stdout(c, "stdout of the uploaded script", "ran\n", r);
    }
out:
    free(data);
    sbx_result_free(r);
    conf_destroy(k, c, sb);
    free(blob);
}

static void t_files_missing(conf_kit *k, conf_case *c)
{
    sbx_sandbox *sb = conf_box(k, c, NULL, false);
    if (sb == NULL)
        return;
    void *data = NULL;
    size_t len = 0;
    int rc = sbx_sandbox_download(sb, "no-such-file.bin", MIB, &data, &len);
    if (rc == SBX_OK)
        free(data);
    if (conf_expect_rc(k, c, "sbx_sandbox_download of a missing file",
                       SBX_E_NOT_FOUND, rc))
        expect_message(k, c, "sbx_sandbox_download of a missing file");
    conf_destroy(k, c, sb);
}

static void t_files_bad_paths(conf_kit *k, conf_case *c)
{
    static const char *const bad[] = {"../x", "/etc/x", "a/../../x", ".."};
    sbx_sandbox *sb = conf_box(k, c, NULL, false);
    if (sb == NULL)
        return;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "sbx_sandbox_upload(\"%s\")", bad[i]);
        int rc = sbx_sandbox_upload(sb, bad[i], "x", 1, 0644);
        if (conf_expect_rc(k, c, what, SBX_E_PATH, rc))
            expect_message(k, c, what);
        void *data = NULL;
        size_t len = 0;
        snprintf(what, sizeof what, "sbx_sandbox_download(\"%s\")", bad[i]);
        rc = sbx_sandbox_download(sb, bad[i], MIB, &data, &len);
        if (rc == SBX_OK)
            free(data);
        conf_expect_rc(k, c, what, SBX_E_PATH, rc);
    }
    conf_destroy(k, c, sb);
}

/* Links made inside the sandbox must never be followed by the host side:
 * not to read (download) and not to write (upload).  The write targets
 * are in a directory the kit makes on this host, so a provider running
 * here that follows a link would visibly write there. */
static void t_files_symlinks(conf_kit *k, conf_case *c)
{
    char token[64], hostdir[160], target[200], xpath[200], line[600];
    sbx_result *r = NULL;
    conf_token(token, sizeof token);
    snprintf(hostdir, sizeof hostdir, "/tmp/sbx-conformance-%s", token);
    snprintf(target, sizeof target, "%s/target", hostdir);
    snprintf(xpath, sizeof xpath, "%s/x", hostdir);
    if (mkdir(hostdir, 0700) != 0) {
        conf_fail(c, "mkdir %s: %s", hostdir, strerror(errno));
        return;
    }
    sbx_sandbox *sb = conf_box(k, c, NULL, false);
    if (sb == NULL)
        goto out;
    snprintf(line, sizeof line,
             "ln -s /etc/passwd link && ln -s /etc dlink && "
             "ln -s %s flink && ln -s %s hlink",
             target, hostdir);
    r = conf_exec_shell(k, c, sb, line);
    if (r == NULL || !conf_expect_status(c, "ln -s", SBX_RUN_OK, r))
        goto out;

    void *data = NULL;
    size_t len = 0;
    int rc = sbx_sandbox_download(sb, "link", MIB, &data, &len);
    if (rc == SBX_OK) {
        char pv[120];
        conf_preview(data, len, pv, sizeof pv);
        conf_fail(c, "download of link -> /etc/passwd: expected SBX_E_PATH, "
                     "got SBX_OK with %zu bytes: %s", len, pv);
        free(data);
    } else if (conf_expect_rc(k, c, "download of link -> /etc/passwd",
                              SBX_E_PATH, rc)) {
        expect_message(k, c, "download of a link");
    }
    rc = sbx_sandbox_download(sb, "dlink/passwd", MIB, &data, &len);
    if (rc == SBX_OK) {
        conf_fail(c, "download of dlink/passwd (dlink -> /etc): expected "
                     "SBX_E_PATH, got SBX_OK with %zu bytes", len);
        free(data);
    } else {
        conf_expect_rc(k, c, "download of dlink/passwd (dlink -> /etc)",
                       SBX_E_PATH, rc);
    }

    /* Writing through a link in the middle of the path is refused. */
    rc = sbx_sandbox_upload(sb, "hlink/x", "evil", 4, 0644);
    conf_expect_rc(k, c, "upload to hlink/x (hlink -> a host directory)",
                   SBX_E_PATH, rc);
    /* A link as the last component is refused, or replaced by the file:
     * never written through. */
    rc = sbx_sandbox_upload(sb, "flink", "evil", 4, 0644);
    if (rc == SBX_OK) {
        rc = sbx_sandbox_download(sb, "flink", MIB, &data, &len);
        if (conf_expect_rc(k, c, "download of flink after an upload "
                                 "replaced it", SBX_OK, rc)) {
            conf_expect_bytes(c, "flink after upload", "evil", 4, data, len);
            free(data);
        }
    } else {
        conf_expect_rc(k, c, "upload to flink (a link to a host file)",
                       SBX_E_PATH, rc);
    }
    struct stat st;
    if (lstat(target, &st) == 0)
        conf_fail(c, "upload to flink wrote through the link: %s exists on "
                     "the host", target);
    if (lstat(xpath, &st) == 0)
        conf_fail(c, "upload to hlink/x wrote through the link: %s exists on "
                     "the host", xpath);
out:
    sbx_result_free(r);
    conf_destroy(k, c, sb);
    /* Only what a failing provider might have written is here. */
    if (unlink(target) != 0 && errno != ENOENT)
        conf_diag(c, "unlink %s: %s", target, strerror(errno));
    if (unlink(xpath) != 0 && errno != ENOENT)
        conf_diag(c, "unlink %s: %s", xpath, strerror(errno));
    if (rmdir(hostdir) != 0)
        conf_diag(c, "rmdir %s: %s", hostdir, strerror(errno));
}

#define LISTED_MAX 8

struct listed {
    size_t n;
    struct {
        char name[32];
        sbx_file_type type;
        uint64_t size;
        int64_t mtime;
    } e[LISTED_MAX];
    bool odd;     /* more entries than expected, or a long name */
};

static int on_listed(void *ud, const char *name, size_t len, sbx_file_type type,
                     uint64_t size, int64_t mtime)
{
    struct listed *l = ud;

    if (l->n == LISTED_MAX || len >= sizeof l->e[0].name) {
        l->odd = true;
        return 0;
    }
    memcpy(l->e[l->n].name, name, len);
    l->e[l->n].name[len] = '\0';
    l->e[l->n].type = type;
    l->e[l->n].size = size;
    l->e[l->n].mtime = mtime;
    l->n++;
    return 0;
}

/* What was uploaded is what the listing says: names, types, sizes; a file is no directory; ".." is refused before the sandbox. */
static void t_list_files(conf_kit *k, conf_case *c)
{
    static const struct {
        const char *name;
        sbx_file_type type;
        uint64_t size;
    } want[] = {
        {".hidden", SBX_FILE_REGULAR, 300},
        {"a.txt", SBX_FILE_REGULAR, 5},
        {"sub", SBX_FILE_DIRECTORY, 0},
    };
    char blob[300];
    struct listed l = {0};
    bool more = true;
    sbx_sandbox *sb = conf_box(k, c, NULL, false);

    if (sb == NULL)
        return;
    conf_fill_random(blob, sizeof blob, UINT64_C(0x115f11e5));
    if (!conf_expect_rc(k, c, "sbx_sandbox_upload(\"ls/a.txt\")", SBX_OK,
                        sbx_sandbox_upload(sb, "ls/a.txt", "hello", 5, 0644)) ||
        !conf_expect_rc(k, c, "sbx_sandbox_upload(\"ls/.hidden\")", SBX_OK,
                        sbx_sandbox_upload(sb, "ls/.hidden", blob, sizeof blob, 0600)) ||
        !conf_expect_rc(k, c, "sbx_sandbox_upload(\"ls/sub/c\")", SBX_OK,
                        sbx_sandbox_upload(sb, "ls/sub/c", "c", 1, 0644)))
        goto out;
    int rc = sbx_sandbox_list_files(sb, "ls", 100, on_listed, &l, &more);
    if (!conf_expect_rc(k, c, "sbx_sandbox_list_files(\"ls\")", SBX_OK, rc))
        goto out;
    conf_expect_true(c, "no more entries than the three uploaded", !l.odd && !more);
    if (!conf_expect_int(c, "entries of ls", 3, (long long)l.n))
        goto out;
    /* the shell's glob orders them: the set is what is checked */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char what[96];
        size_t j = 0;
        while (j < l.n && strcmp(l.e[j].name, want[i].name) != 0)
            j++;
        snprintf(what, sizeof what, "%s is listed", want[i].name);
        if (!conf_expect_true(c, what, j < l.n))
            continue;
        snprintf(what, sizeof what, "type of %s", want[i].name);
        conf_expect_int(c, what, want[i].type, l.e[j].type);
        if (want[i].type == SBX_FILE_REGULAR) {
            snprintf(what, sizeof what, "size of %s", want[i].name);
            conf_expect_int(c, what, (long long)want[i].size, (long long)l.e[j].size);
        }
        snprintf(what, sizeof what, "mtime of %s after 2020", want[i].name);
        conf_expect_true(c, what, l.e[j].mtime > 1577836800);
    }
    /* at most max entries, and truncated says there were more */
    l.n = 0;
    rc = sbx_sandbox_list_files(sb, "ls", 2, on_listed, &l, &more);
    if (conf_expect_rc(k, c, "sbx_sandbox_list_files(\"ls\", max 2)", SBX_OK, rc)) {
        conf_expect_int(c, "entries with max 2", 2, (long long)l.n);
        conf_expect_true(c, "truncated with max 2", more);
    }
    rc = sbx_sandbox_list_files(sb, "ls/a.txt", 100, on_listed, &l, &more);
    if (conf_expect_rc(k, c, "sbx_sandbox_list_files of a file", SBX_E_NOT_FOUND, rc))
        expect_message(k, c, "sbx_sandbox_list_files of a file");
    rc = sbx_sandbox_list_files(sb, "ls/../..", 100, on_listed, &l, &more);
    conf_expect_rc(k, c, "sbx_sandbox_list_files(\"ls/../..\")", SBX_E_PATH, rc);
out:
    conf_destroy(k, c, sb);
}

const conf_test conf_files_tests[] = {
    {"files_roundtrip", SBX_CAP_FILES, t_files_roundtrip,
     "binary upload then download byte-exact; seen by commands; files "
     "commands write can be downloaded; upload modes kept"},
    {"files_missing", SBX_CAP_FILES, t_files_missing,
     "download of a missing file: SBX_E_NOT_FOUND with a message"},
    {"files_bad_paths", SBX_CAP_FILES, t_files_bad_paths,
     "\"../x\", \"/etc/x\", \"a/../../x\", \"..\": SBX_E_PATH both ways"},
    {"files_symlinks", SBX_CAP_FILES, t_files_symlinks,
     "links the sandbox made are never followed: download and upload give "
     "SBX_E_PATH"},
    {"list_files", SBX_CAP_FILES, t_list_files,
     "a listing shows what was uploaded (hidden names too, "
     "types, sizes), max and truncated hold, a file is no directory, \"..\" "
     "is SBX_E_PATH"},
    {NULL, 0, NULL, NULL},
};
