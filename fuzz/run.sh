#!/bin/sh
# fuzz/run.sh SECONDS TARGET... - run the libFuzzer harness of each
# TARGET (fuzz/fuzz_TARGET of the build folder, the current folder) for
# SECONDS from its seed corpus ($MICA_TOP_SRCDIR/fuzz/corpus/TARGET), new
# inputs going to fuzz/work/TARGET.  A crash, a sanitizer report, a leak,
# a timeout (10 s per input) or running out of memory (2 GB) is a
# finding: its input is written to fuzz/findings/TARGET-*, and the script
# goes on with the other targets and fails at the end.  A finding is
# fixed, then copied to $MICA_TOP_SRCDIR/fuzz/regress/TARGET/, where the
# test suite replays it (tests/test_fuzz_replay.sh).
set -u
secs=${1:?usage: run.sh SECONDS TARGET...}
shift
src=${MICA_TOP_SRCDIR:?}
failed=
mkdir -p fuzz/findings
for t in "$@"; do
    mkdir -p "fuzz/work/$t"
    echo "fuzz: $t for ${secs}s"
    if ./fuzz/fuzz_"$t" -max_total_time="$secs" -timeout=10 \
           -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
           -artifact_prefix="fuzz/findings/$t-" \
           "fuzz/work/$t" "$src/fuzz/corpus/$t" > "fuzz/$t.log" 2>&1; then
        grep -E '^(stat::number_of_executed_units|stat::new_units_added)' \
            "fuzz/$t.log" | tr '\n' ' '
        echo
    else
        echo "fuzz: $t FOUND SOMETHING; the end of fuzz/$t.log:"
        tail -40 "fuzz/$t.log"
        ls fuzz/findings/"$t"-* 2>/dev/null
        failed="$failed $t"
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz: findings in:$failed (inputs in fuzz/findings/)"
    exit 1
fi
echo "fuzz: no findings"
