#!/bin/sh
# fuzz/run.sh MODE N TARGET... - run the libFuzzer harness of each TARGET
# (fuzz/fuzz_TARGET of the build folder, the current folder).
#
#   ci N    what CI runs (`make fuzz`, FUZZ_RUNS): first every input of
#           the seed corpus ($MICA_TOP_SRCDIR/fuzz/corpus/TARGET) and of
#           the reproducers (fuzz/regress/TARGET) once, then N mutations
#           from a fixed seed (-seed=25 -runs=N) starting from a fresh
#           work folder: the same commit always gets the same verdict.
#   long N  exploratory (`make fuzz-long`, FUZZ_TIME): N seconds each,
#           a random seed, new inputs kept in fuzz/work/TARGET across runs.
#
# The harness's dictionary (fuzz/TARGET.dict) is used where there is one.
# A crash, a sanitizer report, a leak, a timeout (10 s per input) or
# running out of memory (2 GB) is a finding: its input is written to
# fuzz/findings/TARGET-*, and the script goes on with the other targets
# and fails at the end.  A finding is fixed, then copied to
# $MICA_TOP_SRCDIR/fuzz/regress/TARGET/, where the test suite replays it
# (tests/test_fuzz_replay.sh) and CI's fuzz leg too.  Each target's
# executions and coverage (libFuzzer's cov: and ft:) are printed.
set -u
mode=${1:?usage: run.sh ci|long N TARGET...}
count=${2:?usage: run.sh ci|long N TARGET...}
shift 2
src=${MICA_TOP_SRCDIR:?}
failed=
mkdir -p fuzz/findings
for t in "$@"; do
    dict=
    [ -f "$src/fuzz/$t.dict" ] && dict="-dict=$src/fuzz/$t.dict"
    common="-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=fuzz/findings/$t- $dict"
    case $mode in
    ci)
        rm -rf "fuzz/work/$t"
        mkdir -p "fuzz/work/$t"
        echo "fuzz: $t: the corpus and the reproducers, then $count runs (seed 25)"
        # shellcheck disable=SC2086
        ./fuzz/fuzz_"$t" $common -runs=0 "$src/fuzz/corpus/$t" \
            "$src/fuzz/regress/$t" > "fuzz/$t.replay.log" 2>&1 &&
        ./fuzz/fuzz_"$t" $common -seed=25 -runs="$count" "fuzz/work/$t" \
            "$src/fuzz/corpus/$t" "$src/fuzz/regress/$t" > "fuzz/$t.log" 2>&1
        ;;
    long)
        mkdir -p "fuzz/work/$t"
        echo "fuzz: $t for ${count}s"
        # shellcheck disable=SC2086
        ./fuzz/fuzz_"$t" $common -max_total_time="$count" "fuzz/work/$t" \
            "$src/fuzz/corpus/$t" "$src/fuzz/regress/$t" > "fuzz/$t.log" 2>&1
        ;;
    *)
        echo "run.sh: mode '$mode': expected ci or long" >&2
        exit 2
        ;;
    esac
    if [ $? -eq 0 ]; then
        printf 'fuzz: %s: ' "$t"
        grep -E '^(stat::number_of_executed_units|stat::new_units_added)' \
            "fuzz/$t.log" | tr '\n' ' '
        grep -E '^#[0-9]+.*DONE' "fuzz/$t.log" | sed 's/^/last: /' | tail -1
        echo
    else
        log=fuzz/$t.log
        [ -s "fuzz/$t.log" ] || log=fuzz/$t.replay.log
        echo "fuzz: $t FOUND SOMETHING; the end of $log:"
        tail -40 "$log"
        ls fuzz/findings/"$t"-* 2>/dev/null
        failed="$failed $t"
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz: findings in:$failed (inputs in fuzz/findings/)"
    exit 1
fi
echo "fuzz: no findings"
