/* core/server/jobs-view.c - a job as JSON (GET /v1/jobs/{id}, the list,
 * the 202 of its creation, the events)
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs.h"

static const char *const state_names[] = {
    [JOB_QUEUED] = "queued", [JOB_RUNNING] = "running", [JOB_SUCCEEDED] = "succeeded",
    [JOB_FAILED] = "failed", [JOB_CANCELLED] = "cancelled",
};

const char *job_state_name(int state)
{
    return state >= 0 && state <= JOB_CANCELLED ? state_names[state] : "unknown";
}

int job_state_from_name(const char *name)
{
    for (int i = 0; name && i <= JOB_CANCELLED; i++)
        if (!strcmp(name, state_names[i]))
            return i;
    return -1;
}

double job_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

json_t *job_time_json(double t)
{
    char buf[40];
    struct tm tm;
    time_t sec = (time_t)t;
    int ms = (int)((t - (double)sec) * 1000.0);

    if (t <= 0 || !gmtime_r(&sec, &tm))
        return json_null();
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ".%03dZ", ms < 0 ? 0 : ms % 1000);
    return json_string(buf);
}

json_t *job_item_json(size_t index, const char *line)
{
    json_t *rec = line ? json_loads(line, JSON_ALLOW_NUL, NULL) : NULL;

    return json_pack("{s:I, s:s, s:o}", "index", (json_int_t)index, "state",
                     line ? "done" : "pending", "record", rec ? rec : json_null());
}

json_t *job_view(srv_job *j, size_t offset, size_t limit, bool full)
{
    json_t *o = json_object(), *counts = json_object(), *items = NULL;
    struct job_item *page = NULL;
    char url[64];
    size_t n = 0;
    double rate;

    if (!o || !counts)
        goto fail;
    pthread_mutex_lock(&j->mu);
    json_object_set_new(o, "id", json_string(j->id));
    json_object_set_new(o, "kind", json_string(j->kind->name));
    json_object_set_new(o, "state", json_string(job_state_name(j->state)));
    json_object_set_new(o, "created_at", job_time_json(j->created));
    json_object_set_new(o, "started_at", job_time_json(j->started));
    json_object_set_new(o, "finished_at", job_time_json(j->finished));
    json_object_set_new(o, "progress", json_pack("{s:I, s:I, s:I}", "done",
                                                 (json_int_t)j->done, "total",
                                                 (json_int_t)j->total, "passed",
                                                 (json_int_t)j->passed));
    rate = j->rate;
    if (j->state == JOB_RUNNING) {
        uint64_t now = srv_now_ns();
        rate = now > j->run_t0 ? (double)(j->done - j->run_done0) /
                                     ((double)(now - j->run_t0) / 1e9) : 0;
    }
    json_object_set_new(o, "rate", isfinite(rate) ? json_real(rate) : json_null());
    for (int c = 0; c < JOB_CODES; c++)
        if (j->counts[c])
            json_object_set_new(counts, j->kind->code_name(c),
                                json_integer((json_int_t)j->counts[c]));
    json_object_set(o, "counts", counts);
    json_object_set_new(o, "error", j->err_code ? json_pack("{s:s, s:s, s:n}", "code",
                                                            j->err_code, "message",
                                                            j->err_msg ? j->err_msg : "",
                                                            "provider")
                                                : json_null());
    snprintf(url, sizeof url, "/v1/jobs/%s", j->id);
    json_object_set_new(o, "location", json_string(url));
    snprintf(url, sizeof url, "/v1/jobs/%s/events", j->id);
    json_object_set_new(o, "events", json_string(url));
    j->kind->view(j, o, full);
    if (limit && offset < j->total) {
        n = j->total - offset < limit ? j->total - offset : limit;
        if ((page = malloc(n * sizeof *page)))
            memcpy(page, j->items + offset, n * sizeof *page);
    }
    pthread_mutex_unlock(&j->mu);
    if (limit) {
        /* the lines are read outside the lock: appends never move them */
        if (!(items = json_array()) || (n && !page))
            goto fail;
        for (size_t i = 0; i < n; i++) {
            char *line = page[i].done ? job_read_line(j, page[i].off, page[i].len) : NULL;
            json_array_append_new(items, job_item_json(offset + i, line));
            free(line);
        }
        json_object_set_new(o, "items", items);
        json_object_set_new(o, "offset", json_integer((json_int_t)offset));
        json_object_set_new(o, "next", offset + n < j->total
                                           ? json_integer((json_int_t)(offset + n))
                                           : json_null());
    }
    free(page);
    json_decref(counts);
    return o;
fail:
    free(page);
    json_decref(items);
    json_decref(counts);
    json_decref(o);
    return NULL;
}
