/* core/run/opts-int.h - the insides of create and exec options (core only) */
#ifndef POLYSANDBOX_OPTS_INT_H
#define POLYSANDBOX_OPTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

/* A growable array of owned key/value pairs. */
typedef struct core_kvlist {
    sbx_kv_v1 *items;     /* key and value strings owned */
    size_t n, cap;
} core_kvlist;

int core_kvlist_add(core_kvlist *l, const char *key, const char *value);
void core_kvlist_free(core_kvlist *l);

struct sbx_create_opts {
    char *provider;
    char **fallback;      /* set_fallback: NULL-terminated, or NULL: [core] fallback */
    char *template_name;
    char *image;
    uint64_t limits[SBX_LIMIT_COUNT];   /* 0: not set */
    sbx_network network;
    bool network_set;     /* set_network called: may narrow the template's */
    bool persistent;
    uint64_t ttl_ns;
    core_kvlist env;
    core_kvlist labels;
    /* sbx_run of code with no template_name: the code's template, whose
     * image.PROVIDER (only: not its image) the sandbox runs in; not owned. */
    const char *code_lang;
};

typedef struct core_file {
    char *path;
    void *data;
    size_t len;
    uint32_t mode;
} core_file;

struct sbx_exec_opts {
    char **argv;          /* NULL-terminated, or NULL */
    char *lang;           /* with code: the template */
    char *code;
    size_t code_len;
    char *source;         /* the code's file name, or NULL: the template's */
    char **args;          /* extra arguments for code, NULL-terminated */
    void *stdin_data;
    size_t stdin_len;
    bool has_stdin_fd;    /* set_stdin_fd: stdin read from stdin_fd as it runs */
    int stdin_fd;
    bool has_signal_fd;   /* set_signal_fd: signals read from signal_fd as it runs */
    int signal_fd;
    core_kvlist env;
    char *cwd;
    uint64_t timeout_ns;  /* 0: the sandbox's wall limit */
    uint64_t compile_timeout_ns; /* 0: timeout_ns */
    core_file *files;
    size_t n_files;
    sbx_output_cb cb;
    void *cb_ud;
    sbx_cancel *cancel;   /* (borrowed) or NULL */
    sbx_step_cb step_cb;  /* compile step over, program next */
    void *step_ud;
};


#endif
