/* core/cli/cmd-secret.c - polysandbox secret init|seal|check */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

/* The largest value sbx_secret_seal takes. */
#define SEAL_MAX 4096

static void secret_help(void)
{
    fputs(
"Usage: polysandbox secret init [--force]\n"
"       polysandbox secret seal\n"
"       polysandbox secret check [--json]\n"
"Manage sealed credentials (see polysandbox(1), CREDENTIALS).\n"
"\n"
"  init     create the host key pair, secret.key (mode 0600) and secret.pub,\n"
"           in the configuration directory\n"
"      --force            replace an existing key pair: values sealed to it\n"
"                         can no longer be opened\n"
"  seal     read a value on stdin (not echoed on a terminal; one trailing\n"
"           newline is dropped) and print it sealed to the host's public\n"
"           key, as sealed:v1:..., for a [settings] line of a provider\n"
"  check    open every credential of the configuration and report each\n"
"           (never its value); exit status 1 when one cannot be opened\n"
"      --json             print a JSON object\n"
"  -h, --help             show this help\n",
        stdout);
}

static const char *key_dir(const cli_global *g)
{
    const char *e = secure_getenv("POLYSANDBOX_CONFIG_DIR");

    if (g->config_dir && *g->config_dir)
        return g->config_dir;
    return e && *e ? e : SYSCONFDIR;
}

/* The library's message for calls that take no context. */
static int lib_error(int code)
{
    const sbx_error *e = sbx_ctx_last_error(NULL);
    const char *msg = e && sbx_error_code(e) != SBX_OK ? sbx_error_message(e) : NULL;

    cli_err("%s", msg && *msg ? msg : sbx_strerror(code));
    return code == SBX_E_EXISTS ? CLI_EXIT_FAIL : CLI_EXIT_ERROR;
}

/* ---- init ------------------------------------------------------------------ */

static int cmd_init(cli_global *g, int argc, char **argv)
{
    static const struct option opts[] = {
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    char id[SBX_SECRET_KEY_ID_SIZE];
    bool force = false;
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+fh", opts, NULL)) != -1) {
        switch (c) {
        case 'f': force = true; break;
        case 'h': secret_help(); return CLI_EXIT_OK;
        default: return cli_bad_option("secret init");
        }
    }
    if (optind < argc)
        return cli_usage_error("secret init", "unexpected argument '%s'", argv[optind]);
    rc = sbx_secret_keygen(g->config_dir, force, id);
    if (rc != SBX_OK)
        return lib_error(rc);
    printf("key id %s: %s/secret.key (secret, mode 0600), %s/secret.pub (public)\n",
           id, key_dir(g), key_dir(g));
    return CLI_EXIT_OK;
}

/* ---- seal ------------------------------------------------------------------ */

/* The terminal state to put back, for the signal handler too. */
static struct termios saved_tty;
static volatile sig_atomic_t tty_changed;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define N_STOP (sizeof stop_signals / sizeof stop_signals[0])

static void restore_tty(void)
{
    if (tty_changed) {
        (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
        tty_changed = 0;
    }
}

/* Put echo back, then die of the signal as if we had not caught it. */
static void on_stop_signal(int sig)
{
    restore_tty();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int echo_off(struct sigaction old[N_STOP], struct sigaction *old_tstp)
{
    struct sigaction sa;
    struct termios t;

    if (tcgetattr(STDIN_FILENO, &saved_tty) != 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_STOP; i++)
        sigaction(stop_signals[i], &sa, &old[i]);
    /* Stopped with echo off, the shell would be left without echo. */
    sa.sa_handler = SIG_IGN;
    sigaction(SIGTSTP, &sa, old_tstp);
    t = saved_tty;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
    tty_changed = 1;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) != 0) {
        tty_changed = 0;
        return -1;
    }
    return 0;
}

static void echo_on(const struct sigaction old[N_STOP], const struct sigaction *old_tstp)
{
    restore_tty();
    for (size_t i = 0; i < N_STOP; i++)
        sigaction(stop_signals[i], &old[i], NULL);
    sigaction(SIGTSTP, old_tstp, NULL);
}

/*
 * Read the value into @buf (@size bytes): one line from a terminal, all
 * of stdin otherwise.  Returns its length, or -1 after a message.
 */
static ssize_t read_value(char *buf, size_t size, bool tty)
{
    size_t len = 0;
    ssize_t n;

    for (;;) {
        n = read(STDIN_FILENO, buf + len, tty ? 1 : size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            cli_err("secret seal: cannot read stdin: %s", strerror(errno));
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (tty && buf[len - 1] == '\n')
            break;
        if (len == size) {
            cli_err("secret seal: the value is longer than %d bytes (keep a longer "
                    "secret in a file only root can read and use file:PATH)", SEAL_MAX);
            return -1;
        }
    }
    /* One trailing newline is the end of the line, not part of the value. */
    if (len > 0 && buf[len - 1] == '\n') {
        len--;
        if (len > 0 && buf[len - 1] == '\r')
            len--;
    }
    return (ssize_t)len;
}

static int cmd_seal(cli_global *g, int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    static const struct rlimit no_core = { 0, 0 };
    /* Static: one buffer, locked in memory and wiped after use. */
    static char buf[SEAL_MAX + 3];
    struct sigaction old[N_STOP], old_tstp;
    bool tty = isatty(STDIN_FILENO) == 1;
    char *sealed = NULL;
    ssize_t len;
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': secret_help(); return CLI_EXIT_OK;
        default: return cli_bad_option("secret seal");
        }
    }
    if (optind < argc)
        return cli_usage_error("secret seal", "unexpected argument '%s' (the value is "
                               "read on stdin, never from the command line)", argv[optind]);
    /* The value must not reach a core file, swap or another process. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || setrlimit(RLIMIT_CORE, &no_core) != 0) {
        cli_err("secret seal: cannot make the process undumpable: %s", strerror(errno));
        return CLI_EXIT_ERROR;
    }
    (void)mlock(buf, sizeof buf);
    if (tty) {
        if (echo_off(old, &old_tstp) != 0) {
            cli_err("secret seal: cannot turn off echo on the terminal: %s",
                    strerror(errno));
            return CLI_EXIT_ERROR;
        }
        fputs("Value to seal (not shown): ", stderr);
        fflush(stderr);
    }
    len = read_value(buf, SEAL_MAX + 2, tty);
    if (tty) {
        echo_on(old, &old_tstp);
        fputc('\n', stderr);
    }
    if (len < 0) {
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    if (len == 0) {
        cli_err("secret seal: the value is empty");
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    rc = sbx_secret_seal(g->config_dir, buf, (size_t)len, &sealed);
    if (rc != SBX_OK) {
        rc = lib_error(rc);
        goto out;
    }
    if (puts(sealed) == EOF || fflush(stdout) != 0) {
        cli_err("secret seal: cannot write stdout: %s", strerror(errno));
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    explicit_bzero(buf, sizeof buf);
    free(sealed);
    return rc;
}

/* ---- check ----------------------------------------------------------------- */

typedef struct check_state {
    json_t *list;       /* with --json */
    unsigned failed;
    unsigned total;
} check_state;

static void on_credential(void *ud, const char *provider, const char *key,
                          const char *file, int line, const char *source, int code,
                          const char *message)
{
    check_state *st = ud;

    st->total++;
    if (code != SBX_OK)
        st->failed++;
    if (st->list) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:s, s:b}", "provider", provider,
                              "key", key, "file", file, "line", line, "source", source,
                              "ok", code == SBX_OK);
        if (o && code != SBX_OK)
            json_object_set_new(o, "error", json_string(message ? message : ""));
        else if (o && message)
            json_object_set_new(o, "note", json_string(message));
        json_array_append_new(st->list, o);
        return;
    }
    if (code != SBX_OK)
        printf("%-8s %s.%s (%s): %s\n", "FAILED", provider, key, source,
               message ? message : sbx_strerror(code));
    else if (message)
        printf("%-8s %s.%s (%s) %s:%d: %s\n", "WARNING", provider, key, source, file,
               line, message);
    else
        printf("%-8s %s.%s (%s) %s:%d\n", "OK", provider, key, source, file, line);
}

static int cmd_check(cli_global *g, int argc, char **argv)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    check_state st = { 0 };
    bool json = false;
    sbx_ctx *ctx;
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': secret_help(); return CLI_EXIT_OK;
        default: return cli_bad_option("secret check");
        }
    }
    if (optind < argc)
        return cli_usage_error("secret check", "unexpected argument '%s'", argv[optind]);
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    if (json && !(st.list = json_array())) {
        sbx_ctx_free(ctx);
        cli_err("out of memory");
        return CLI_EXIT_ERROR;
    }
    rc = sbx_secret_check(ctx, on_credential, &st);
    sbx_ctx_free(ctx);
    if (rc != SBX_OK && rc != SBX_E_CONFIG) {
        json_decref(st.list);
        cli_err("secret check: %s", sbx_strerror(rc));
        return CLI_EXIT_ERROR;
    }
    if (json) {
        json_t *o = json_pack("{s:b, s:o}", "ok", st.failed == 0, "credentials", st.list);
        rc = cli_print_json(o);
        if (rc != CLI_EXIT_OK)
            return rc;
    } else if (st.total == 0 && !g->quiet) {
        printf("no credentials in the configuration\n");
    }
    if (!json && fflush(stdout) != 0)
        return CLI_EXIT_ERROR;
    return st.failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int cli_cmd_secret(cli_global *g, int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("secret", "missing subcommand (init, seal or check)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        secret_help();
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "init"))
        return cmd_init(g, argc - 1, argv + 1);
    if (!strcmp(argv[1], "seal"))
        return cmd_seal(g, argc - 1, argv + 1);
    if (!strcmp(argv[1], "check"))
        return cmd_check(g, argc - 1, argv + 1);
    return cli_usage_error("secret", "unknown subcommand '%s' (init, seal or check)",
                           argv[1]);
}
