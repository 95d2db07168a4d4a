# core/cli/local.mk - the polysandbox command
#
# Links the public API of libpolysandbox only (never a core/ internal header);
# compiles the server's directory entry as JSON (core/server/file-json.c
# and the leaves it needs) so that files --json gives polysandboxd's.

bin_PROGRAMS += polysandbox
polysandbox_SOURCES = \
	core/cli/cli.h \
	core/cli/main.c \
	core/cli/util.c \
	core/cli/format.c \
	core/cli/request.c \
	core/cli/exec.c \
	core/cli/artifacts.c \
	core/cli/interrupt.c \
	core/cli/locate.c \
	core/cli/cmd-run.c \
	core/cli/deps.c \
	core/cli/cmd-sandbox.c \
	core/cli/cmd-files.c \
	core/cli/cmd-listing.c \
	core/server/json-text.h \
	core/server/json-text.c \
	core/server/b64.h \
	core/server/b64.c \
	core/server/file-json.h \
	core/server/file-json.c \
	core/server/utf8.h \
	core/server/utf8.c \
	core/cli/cmd-providers.c \
	core/cli/info-json.c \
	core/cli/cmd-doctor.c \
	core/cli/cmd-secret.c \
	core/cli/cmd-gc.c \
	core/cli/cmd-pools.c \
	core/cli/cmd-image.c \
	core/cli/cmd-image-build.c \
	core/cli/eval-cli.h \
	core/cli/eval-common.c \
	core/cli/eval-progress.c \
	core/cli/cmd-eval.c \
	core/cli/cmd-compare.c
polysandbox_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(SODIUM_CFLAGS)
polysandbox_LDADD = core/libpolysandbox.la $(JANSSON_LIBS) $(SODIUM_LIBS) -lm

dist_man_MANS += doc/polysandbox.1 doc/polysandbox-eval.1

bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = contrib/bash-completion/polysandbox
