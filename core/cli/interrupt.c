/* core/cli/interrupt.c - SIGINT, SIGTERM and SIGHUP during a run, exec or eval
 *
 * The first one cancels the command through its cancel handle: the
 * library kills it with every process it started and a run's sandbox is
 * destroyed as after any run, where dying at once would leave them to
 * their time-to-live.  We then exit 128+N.  A second one kills us.
 * SIGHUP is the terminal hanging up (a closed window, a dropped ssh
 * session) under an `exec -i` or `run -i`: the same cancel, so nothing
 * is left running; under nohup it stays ignored.  eval gives its own
 * handler (cli_interrupt_catch): it stops taking samples instead.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "cli.h"

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
#define N_CAUGHT (sizeof caught / sizeof caught[0])

static sbx_cancel *cancel;              /* fired by the handler */
static volatile sig_atomic_t interrupted; /* the signal, or 0 */
static struct sigaction saved[N_CAUGHT];
static bool installed[N_CAUGHT];

static void on_interrupt(int sig)
{
    int e = errno;

    interrupted = sig;
    sbx_cancel_fire(cancel);
    errno = e;
}

int cli_interrupt_catch(void (*fn)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    if (sigemptyset(&sa.sa_mask) != 0)
        return -1;
    for (size_t i = 0; i < N_CAUGHT; i++) {
        struct sigaction old;
        /* ignored (a background job of a shell, nohup): it stays ignored */
        if (sigaction(caught[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        if (sigaction(caught[i], &sa, &saved[i]) != 0) {
            cli_err("cannot set up SIGINT handling");
            return -1;
        }
        installed[i] = true;
    }
    return 0;
}

int cli_interrupt_begin(sbx_exec_opts *x)
{
    if ((cancel = sbx_cancel_new()) == NULL ||
        sbx_exec_opts_set_cancel(x, cancel) != SBX_OK) {
        cli_err("cannot set up cancellation");
        return CLI_EXIT_ERROR;
    }
    return cli_interrupt_catch(on_interrupt) == 0 ? -1 : CLI_EXIT_ERROR;
}

int cli_interrupted(void)
{
    return interrupted;
}

void cli_interrupt_end(void)
{
    for (size_t i = 0; i < N_CAUGHT; i++)
        if (installed[i]) {
            (void)sigaction(caught[i], &saved[i], NULL);
            installed[i] = false;
        }
    sbx_cancel_free(cancel);
    cancel = NULL;
}
