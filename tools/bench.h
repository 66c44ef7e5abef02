/*
 * tools/bench.h - what `mica bench` (tools/cmd_bench.c: options and the
 * timed loop) shares with its report (tools/bench_report.c: statistics
 * as trtexec computes them, the summary, the per-layer table, the JSON
 * exports in trtexec's layouts).
 */
#ifndef MICA_CLI_BENCH_H
#define MICA_CLI_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "mica/mica.h"
#include "inputs.h"

/* The options of a run (tools/cmd_bench.c parses them). */
typedef struct bench {
    const char *source;
    uint32_t device;
    long profile;
    char **paths;
    int nb_paths;
    cli_inputs_t inputs;
    long iterations;
    double warmup_ms;
    double duration_s;
    int cuda_graph;          /* 1: --cuda-graph, -1: --no-cuda-graph */
    int no_transfers, profile_layers, verbose;
    const char *export_times, *export_profile;
} bench_t;

/* The most queries one trace holds (64 bytes each): a longer run stops. */
#define BENCH_MAX_QUERIES (1L << 20)
/* Per-layer medians are over the first this many profiled queries. */
#define BENCH_MAX_LAYER_SAMPLES (1L << 16)

/*
 * One query, in milliseconds since the time origin: enq_* and host_end
 * on the host's clock (host_end after the wait), the others on the
 * device's.  Without transfers, the H2D span is empty at the compute's
 * start and the D2H span at its end.
 */
typedef struct bench_query {
    double enq_start, enq_end;
    double h2d_start, h2d_end;
    double compute_start, compute_end;
    double d2h_start, d2h_end;
    double host_end;
} bench_query_t;

/* Per-layer times over the profiled queries. */
typedef struct bench_layers {
    int32_t nb;                 /* the engine's layers */
    double *total;              /* per layer: ms over every query */
    int64_t *runs;              /* per layer: enqueues (loop trips count) */
    float *samples;             /* [query][layer] ms, the first queries */
    int64_t nb_queries;         /* profiled queries */
    int64_t nb_samples;         /* queries in samples */
} bench_layers_t;

/* What the report says about the run. */
typedef struct bench_run {
    const char *source;
    const char *name;           /* the manifest's name, "" if none */
    uint32_t device;
    int transfers;
    int cuda_graph;
    const char *cuda_graph_why; /* why graphs are off, NULL if on */
    int profile_layers;
    int verbose;
    int capped;                 /* stopped at BENCH_MAX_QUERIES */
    int64_t nb_warmup;
    double warmup_ms;           /* host time the warmup took */
    const bench_query_t *q;     /* the timed queries */
    int64_t nb;
} bench_run_t;

/*
 * Warmup, then the timed queries into *qs (malloc'd; r->q points to it),
 * the layers' times into l with --profile-layers (tools/bench_run.c).
 * CLI_OK or CLI_ERROR after a message.
 */
int bench_measure(const bench_t *b, mica_context_t *ctx, mica_exec_t *exec,
                  bench_run_t *r, bench_layers_t *l, bench_query_t **qs);

/* The performance summary, warnings and notes on f. */
void bench_print_summary(const bench_run_t *r, FILE *f);

/* The per-layer table ("=== Profile (N iterations) ==="). */
void bench_print_layers(const bench_run_t *r, mica_engine_t *engine,
                        const bench_layers_t *l, FILE *f);

/* The JSON exports, complete or absent: CLI_OK or CLI_ERROR (said). */
int bench_export_times(const bench_run_t *r, const char *path);
int bench_export_profile(mica_engine_t *engine, const bench_layers_t *l,
                         const char *path);

#endif /* MICA_CLI_BENCH_H */
