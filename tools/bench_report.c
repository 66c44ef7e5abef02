/*
 * tools/bench_report.c - what `mica bench` prints and exports, in
 * trtexec's terms: the performance summary (metric names, units and
 * percentiles as trtexec prints them), its warnings (enqueue-bound,
 * transfer-bound, unstable), the per-layer table, and the JSON files of
 * --export-times and --export-profile in trtexec's layouts.
 *
 * Statistics follow trtexec's: the median of an even count is the mean
 * of the two middle values; percentile p is the value at index
 * n - 1 - floor((1 - p/100) n) of the sorted values; the coefficient of
 * variation is the population standard deviation over the mean.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "files.h"
#include "cli.h"

/* trtexec's thresholds, the unstable one as issue 14 asks. */
#define ENQUEUE_BOUND 0.8 /* enqueue median over compute median */
#define UNSTABLE_CV 2.5   /* percent */

typedef struct stats {
    double min, max, mean, median, p90, p95, p99, cv;
} stats_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *v, int64_t n, double p)
{
    int64_t exclude = (int64_t)((1 - p / 100) * (double)n);
    int64_t k = n - 1 - exclude;
    return v[k > 0 ? k : 0];
}

/* Statistics of v (n > 0), which is sorted in place. */
static stats_t stats_of(double *v, int64_t n)
{
    stats_t s;
    double sum = 0, var = 0;
    int64_t k;

    memset(&s, 0, sizeof s);
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (k = 0; k < n; k++)
        sum += v[k];
    s.min = v[0];
    s.max = v[n - 1];
    s.mean = sum / (double)n;
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.p90 = percentile(v, n, 90);
    s.p95 = percentile(v, n, 95);
    s.p99 = percentile(v, n, 99);
    for (k = 0; k < n; k++)
        var += (v[k] - s.mean) * (v[k] - s.mean);
    s.cv = s.mean > 0 ? sqrt(var / (double)n) / s.mean * 100 : 0;
    return s;
}

static void print_stats(FILE *f, const char *what, const stats_t *s)
{
    fprintf(f, "%s: min = %.6g ms, max = %.6g ms, mean = %.6g ms, "
               "median = %.6g ms, percentile(90%%) = %.6g ms, "
               "percentile(95%%) = %.6g ms, percentile(99%%) = %.6g ms\n",
            what, s->min, s->max, s->mean, s->median, s->p90, s->p95, s->p99);
}

enum { M_LATENCY, M_ENQUEUE, M_H2D, M_COMPUTE, M_D2H, NB_METRICS };

static double metric(const bench_query_t *q, int m)
{
    double h2d = q->h2d_end - q->h2d_start;
    double compute = q->compute_end - q->compute_start;
    double d2h = q->d2h_end - q->d2h_start;
    switch (m) {
    case M_LATENCY: return h2d + compute + d2h;
    case M_ENQUEUE: return q->enq_end - q->enq_start;
    case M_H2D: return h2d;
    case M_COMPUTE: return compute;
    default: return d2h;
    }
}

static void explain(FILE *f)
{
    fputs("\n=== Explanations of the performance metrics ===\n"
          "Total Host Walltime: the host walltime from when the first query "
          "(after warmups) is enqueued to when the last query is completed.\n"
          "GPU Compute Time: the device latency to execute the layers for a "
          "query.\n"
          "Total GPU Compute Time: the summation of the GPU Compute Time of "
          "all the queries.\n"
          "Throughput: the number of queries divided by the Total Host "
          "Walltime.\n"
          "Enqueue Time: the host latency to enqueue a query (upload, "
          "enqueue and download calls, without the wait).\n"
          "H2D Latency: the latency of the host-to-device copies of a "
          "query's inputs.\n"
          "D2H Latency: the latency of the device-to-host copies of a "
          "query's outputs.\n"
          "Latency: the summation of H2D Latency, GPU Compute Time and D2H "
          "Latency: the latency of a single query.\n", f);
}

void bench_print_summary(const bench_run_t *r, FILE *f)
{
    static const char *const names[NB_METRICS] = {
        "Latency", "Enqueue Time", "H2D Latency", "GPU Compute Time",
        "D2H Latency"};
    stats_t s[NB_METRICS];
    double *v = malloc((size_t)(r->nb ? r->nb : 1) * sizeof *v);
    double wall = 0, compute_total = 0;
    int64_t k;
    int m, cpu = r->device == MICA_DEVICE_CPU;

    if (!v) {
        cli_error("out of memory");
        return;
    }
    for (m = 0; m < NB_METRICS; m++) {
        for (k = 0; k < r->nb; k++)
            v[k] = metric(&r->q[k], m);
        if (m == M_COMPUTE)
            for (k = 0; k < r->nb; k++)
                compute_total += v[k];
        s[m] = stats_of(v, r->nb);
    }
    free(v);
    if (r->nb)
        wall = r->q[r->nb - 1].host_end - r->q[0].enq_start;
    fprintf(f, "Warmup completed %lld queries over %.6g ms\n",
            (long long)r->nb_warmup, r->warmup_ms);
    fprintf(f, "Timing trace has %lld queries over %.6g s%s\n",
            (long long)r->nb, wall / 1000,
            r->capped ? " (stopped there: the most one trace holds)" : "");
    fprintf(f, "\n=== Performance summary ===\n");
    fprintf(f, "Throughput: %.6g qps\n", wall > 0 ? (double)r->nb / wall * 1000
                                                  : 0.0);
    for (m = 0; m < NB_METRICS; m++)
        print_stats(f, names[m], &s[m]);
    fprintf(f, "Total Host Walltime: %.6g s\n", wall / 1000);
    fprintf(f, "Total GPU Compute Time: %.6g s\n", compute_total / 1000);
    if (cpu)
        fprintf(f, "Note: on the cpu device, GPU Compute Time is the host "
                   "time of the layers, H2D and D2H Latency are copies in "
                   "host memory (into and out of the engine's arena), and "
                   "Enqueue Time includes the layers' work.\n");
    if (!r->transfers)
        fprintf(f, "Note: data transfers are off (--no-data-transfers): H2D "
                   "and D2H Latency are 0.\n");
    if (r->profile_layers)
        fprintf(f, "Note: per-layer timing is on: the times above include "
                   "the cost of a marker after every layer.\n");
    if (!cpu && s[M_ENQUEUE].median > ENQUEUE_BOUND * s[M_COMPUTE].median)
        fprintf(f, "Warning: * Throughput may be bound by Enqueue Time "
                   "rather than GPU Compute and the GPU may be "
                   "under-utilized.\n"
                   "Warning:   %s\n", r->cuda_graph
                       ? "CUDA graphs are already in use."
                       : "If not already in use, --cuda-graph (CUDA graphs "
                         "where possible) may increase the throughput.");
    if (r->transfers &&
        s[M_H2D].median + s[M_D2H].median >= s[M_COMPUTE].median)
        fprintf(f, "Warning: * Throughput may be bound by host-device "
                   "transfers (H2D + D2H median %.6g ms) rather than GPU "
                   "Compute (median %.6g ms) and the GPU may be "
                   "under-utilized.\n"
                   "Warning:   Add --no-data-transfers to disable data "
                   "transfers.\n", s[M_H2D].median + s[M_D2H].median,
                s[M_COMPUTE].median);
    if (s[M_COMPUTE].cv > UNSTABLE_CV)
        fprintf(f, "Warning: * GPU compute time is unstable, with "
                   "coefficient of variance = %.4g%%.\n"
                   "Warning:   If not already in use, locking GPU clock "
                   "frequency or a quieter machine may improve the "
                   "stability.\n", s[M_COMPUTE].cv);
    if (r->verbose)
        explain(f);
}

/* Per-layer total, mean and median (over the samples) of layer i. */
static void layer_stats(const bench_layers_t *l, int32_t i, double *total,
                        double *avg, double *median, double *scratch)
{
    int64_t k;
    *total = l->total[i];
    *avg = l->nb_queries ? l->total[i] / (double)l->nb_queries : 0;
    for (k = 0; k < l->nb_samples; k++)
        scratch[k] = l->samples[k * l->nb + i];
    *median = l->nb_samples ? stats_of(scratch, l->nb_samples).median : 0;
}

void bench_print_layers(const bench_run_t *r, mica_engine_t *engine,
                        const bench_layers_t *l, FILE *f)
{
    static const char *const head[7] = {
        "Layer", "Type", "Implementation", "Time (ms)", "Avg. Time (ms)",
        "Median Time (ms)", "Time %"};
    cli_table_t *t = cli_table_new(7);
    double *scratch = malloc((size_t)(l->nb_samples + 1) * sizeof *scratch);
    double *sums = malloc((size_t)(l->nb_samples + 1) * sizeof *sums);
    double all = 0, total, avg, median;
    char c[4][64];
    const char *row[7];
    int32_t i;
    int64_t k;

    (void)r;
    if (!t || !scratch || !sums) {
        cli_error("out of memory");
        goto out;
    }
    for (i = 0; i < l->nb; i++)
        all += l->total[i];
    cli_table_add(t, head);
    for (i = 0; i < l->nb; i++) {
        mica_layer_info_t info;
        if (!l->runs[i])
            continue; /* never ran: nothing to say */
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_layer(engine, i, &info) != MICA_OK)
            continue;
        layer_stats(l, i, &total, &avg, &median, scratch);
        snprintf(c[0], sizeof c[0], "%.4g", total);
        snprintf(c[1], sizeof c[1], "%.4g", avg);
        snprintf(c[2], sizeof c[2], "%.4g", median);
        snprintf(c[3], sizeof c[3], "%.1f", all > 0 ? total / all * 100 : 0);
        row[0] = info.name;
        row[1] = info.type;
        row[2] = info.implementation;
        row[3] = c[0];
        row[4] = c[1];
        row[5] = c[2];
        row[6] = c[3];
        cli_table_add(t, row);
    }
    for (k = 0; k < l->nb_samples; k++) {
        sums[k] = 0;
        for (i = 0; i < l->nb; i++)
            sums[k] += l->samples[k * l->nb + i];
    }
    snprintf(c[0], sizeof c[0], "%.4g", all);
    snprintf(c[1], sizeof c[1], "%.4g",
             l->nb_queries ? all / (double)l->nb_queries : 0);
    snprintf(c[2], sizeof c[2], "%.4g",
             l->nb_samples ? stats_of(sums, l->nb_samples).median : 0);
    row[0] = "Total";
    row[1] = row[2] = "";
    row[3] = c[0];
    row[4] = c[1];
    row[5] = c[2];
    row[6] = "100.0";
    cli_table_add(t, row);
    fprintf(f, "\n=== Profile (%lld iterations) ===\n",
            (long long)l->nb_queries);
    cli_table_print(t, f, "");
    if (l->nb_samples < l->nb_queries)
        fprintf(f, "Medians are over the first %lld iterations.\n",
                (long long)l->nb_samples);
out:
    cli_table_free(t);
    free(scratch);
    free(sums);
}

/* ---- JSON ---------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* A number JSON accepts (no inf or nan). */
static double json_num(double v)
{
    return isfinite(v) ? v : 0;
}

/* Open path's temporary sibling (core/base/files.h: a new file under an
 * unpredictable name, links not followed); *tmp is malloc'd. */
static FILE *open_tmp(const char *path, char **tmp)
{
    FILE *f = mica__fcreate_tmp(path, tmp);
    if (!f)
        cli_error("cannot write '%s': %s", path, strerror(errno));
    return f;
}

/* Close f and rename tmp onto path, or remove it. */
static int close_tmp(FILE *f, char *tmp, const char *path)
{
    int bad = ferror(f);
    int rc = CLI_OK;
    if (fclose(f) != 0 || bad)
        rc = cli_error("cannot write '%s': %s", tmp, strerror(errno));
    else if (rename(tmp, path) != 0)
        rc = cli_error("cannot rename '%s' to '%s': %s", tmp, path,
                       strerror(errno));
    if (rc != CLI_OK)
        remove(tmp);
    free(tmp);
    return rc;
}

int bench_export_times(const bench_run_t *r, const char *path)
{
    char *tmp;
    FILE *f = open_tmp(path, &tmp);
    int64_t k;

    if (!f)
        return CLI_ERROR;
    fputs("[\n", f);
    for (k = 0; k < r->nb; k++) {
        const bench_query_t *q = &r->q[k];
        fprintf(f, "%s{ \"startEnqMs\" : %.9g, \"endEnqMs\" : %.9g, "
                   "\"startH2dMs\" : %.9g, \"endH2dMs\" : %.9g, "
                   "\"startComputeMs\" : %.9g, \"endComputeMs\" : %.9g, "
                   "\"startD2hMs\" : %.9g, \"endD2hMs\" : %.9g, "
                   "\"h2dMs\" : %.9g, \"computeMs\" : %.9g, "
                   "\"d2hMs\" : %.9g, \"latencyMs\" : %.9g, "
                   "\"endToEndMs\" : %.9g }\n",
                k ? ", " : "  ", json_num(q->enq_start), json_num(q->enq_end),
                json_num(q->h2d_start), json_num(q->h2d_end),
                json_num(q->compute_start), json_num(q->compute_end),
                json_num(q->d2h_start), json_num(q->d2h_end),
                json_num(metric(q, M_H2D)), json_num(metric(q, M_COMPUTE)),
                json_num(metric(q, M_D2H)), json_num(metric(q, M_LATENCY)),
                json_num(q->d2h_end - q->h2d_start));
    }
    fputs("]\n", f);
    return close_tmp(f, tmp, path);
}

int bench_export_profile(mica_engine_t *engine, const bench_layers_t *l,
                         const char *path)
{
    double *scratch = malloc((size_t)(l->nb_samples + 1) * sizeof *scratch);
    double all = 0, total, avg, median;
    char *tmp = NULL;
    FILE *f;
    int32_t i;

    if (!scratch)
        return cli_error("out of memory");
    if (!(f = open_tmp(path, &tmp))) {
        free(scratch);
        return CLI_ERROR;
    }
    for (i = 0; i < l->nb; i++)
        all += l->total[i];
    fprintf(f, "[\n  { \"count\" : %lld }\n", (long long)l->nb_queries);
    for (i = 0; i < l->nb; i++) {
        mica_layer_info_t info;
        if (!l->runs[i])
            continue;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mica_engine_layer(engine, i, &info) != MICA_OK)
            continue;
        layer_stats(l, i, &total, &avg, &median, scratch);
        fputs(", { \"name\" : ", f);
        json_string(f, info.name);
        fprintf(f, ", \"timeMs\" : %.9g, \"averageMs\" : %.6g, "
                   "\"medianMs\" : %.6g, \"percentage\" : %.6g }\n",
                json_num(total), json_num(avg), json_num(median),
                json_num(all > 0 ? total / all * 100 : 0));
    }
    fputs("]\n", f);
    free(scratch);
    return close_tmp(f, tmp, path);
}
