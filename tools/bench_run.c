/*
 * tools/bench_run.c - the timed loop of `mica bench`: queries (upload,
 * enqueue, download, then the wait, the context's markers read back),
 * the warmup, the timed queries until both --iterations and --duration-s
 * are reached, per-layer times gathered, and the progress line.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* One query: its calls, the wait, then its device times into q. */
static mica_status_t query(const bench_t *b, mica_exec_t *exec,
                           double origin, bench_query_t *q)
{
    mica_exec_times_t t;
    mica_status_t st = MICA_OK;

    q->enq_start = now_ms() - origin;
    if (!b->no_transfers)
        st = mica_exec_upload(exec);
    if (st == MICA_OK)
        st = mica_exec_enqueue(exec);
    if (st == MICA_OK && !b->no_transfers)
        st = mica_exec_download(exec);
    q->enq_end = now_ms() - origin;
    if (st == MICA_OK)
        st = mica_exec_sync(exec);
    q->host_end = now_ms() - origin;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    if (st != MICA_OK || (st = mica_exec_times(exec, &t)) != MICA_OK)
        return st;
    q->compute_start = t.enqueue_start;
    q->compute_end = t.enqueue_end;
    if (b->no_transfers) {
        q->h2d_start = q->h2d_end = t.enqueue_start;
        q->d2h_start = q->d2h_end = t.enqueue_end;
    } else {
        q->h2d_start = t.upload_start;
        q->h2d_end = t.upload_end;
        q->d2h_start = t.download_start;
        q->d2h_end = t.download_end;
    }
    return MICA_OK;
}

/* The layers' times of the query just run, added to l. */
static mica_status_t add_layers(mica_exec_t *exec, bench_layers_t *l,
                                double *ms, int32_t *runs)
{
    mica_status_t st = mica_exec_layer_times(exec, ms, runs, l->nb);
    int32_t i;
    if (st != MICA_OK)
        return st;
    for (i = 0; i < l->nb; i++) {
        l->total[i] += ms[i];
        l->runs[i] += runs[i];
        if (l->nb_samples < BENCH_MAX_LAYER_SAMPLES)
            l->samples[l->nb_samples * l->nb + i] = (float)ms[i];
    }
    if (l->nb_samples < BENCH_MAX_LAYER_SAMPLES)
        l->nb_samples++;
    l->nb_queries++;
    return MICA_OK;
}

/* The progress line: on a terminal rewritten in place, else (--verbose)
 * one line each time.  done: the last one. */
static void progress(const char *what, double elapsed_ms, double goal_ms,
                     int64_t n, int tty, int done)
{
    fprintf(stderr, "%sbench: %s %.1f s of %.1f s, %lld queries%s",
            tty ? "\r" : "", what, elapsed_ms / 1000, goal_ms / 1000,
            (long long)n, tty ? "\033[K" : "\n");
    if (tty && done)
        fputc('\n', stderr);
    fflush(stderr);
}

int bench_measure(const bench_t *b, mica_context_t *ctx, mica_exec_t *exec,
                   bench_run_t *r, bench_layers_t *l, bench_query_t **qs)
{
    int show = b->verbose || isatty(STDERR_FILENO), tty = isatty(STDERR_FILENO);
    double origin, start, next_show, goal = b->duration_s * 1e3, *ms = NULL;
    int64_t cap = 1024;
    int32_t *runs = NULL;
    bench_query_t warm;
    mica_status_t st;

    *qs = malloc((size_t)cap * sizeof **qs);
    ms = calloc((size_t)l->nb + 1, sizeof *ms);
    runs = calloc((size_t)l->nb + 1, sizeof *runs);
    if (!*qs || !ms || !runs) {
        free(ms);
        free(runs);
        return cli_error("out of memory");
    }
    /* Again: the time origin is now. */
    st = mica_exec_set_timing(exec, MICA_TIMING_STAGES |
                                        (b->profile_layers ? MICA_TIMING_LAYERS
                                                           : 0));
    origin = now_ms();
    next_show = origin + 500;
    while (st == MICA_OK && (now_ms() - origin < b->warmup_ms)) {
        st = query(b, exec, origin, &warm);
        r->nb_warmup++;
        if (show && now_ms() >= next_show) {
            progress("warmup", now_ms() - origin, b->warmup_ms, r->nb_warmup,
                     tty, 0);
            next_show += 500;
        }
    }
    r->warmup_ms = now_ms() - origin;
    start = now_ms();
    while (st == MICA_OK &&
           (r->nb < b->iterations || now_ms() - start < goal)) {
        if (r->nb == BENCH_MAX_QUERIES) {
            r->capped = 1;
            break;
        }
        if (r->nb == cap) {
            bench_query_t *g = realloc(*qs, (size_t)cap * 2 * sizeof **qs);
            if (!g) {
                free(ms);
                free(runs);
                return cli_error("out of memory");
            }
            *qs = g;
            cap *= 2;
        }
        st = query(b, exec, origin, &(*qs)[r->nb]);
        if (st == MICA_OK && b->profile_layers)
            st = add_layers(exec, l, ms, runs);
        r->nb++;
        if (show && now_ms() >= next_show) {
            progress("timing", now_ms() - start, goal, r->nb, tty, 0);
            next_show += 500;
        }
    }
    if (show && st == MICA_OK)
        progress("done", now_ms() - start, goal, r->nb, tty, 1);
    free(ms);
    free(runs);
    if (st != MICA_OK)
        return cli_error("%s", mica_context_error(ctx));
    r->q = *qs;
    return CLI_OK;
}
