# tests/tap.sh - the TAP helpers of the shell tests (sourced, POSIX sh).
# The test sets $tmp (a scratch folder) before calling run.

n=0
failed=0
# ok STATUS DESCRIPTION: one TAP line from a command's exit status
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
    fi
}
# skip DESCRIPTION REASON
skip() {
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}
# is WANT GOT DESCRIPTION
is() {
    if [ "x$1" = "x$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3"
        echo "#     want: $1"
        echo "#      got: $2"
    fi
}
# has FILE PATTERN DESCRIPTION: a line of FILE matches the grep pattern
has() {
    if grep -q -e "$2" "$1"; then
        ok 0 "$3"
    else
        ok 1 "$3"
        echo "#     no line matches: $2"
        sed 's/^/#     | /' "$1"
    fi
}
# hasnt FILE PATTERN DESCRIPTION: no line of FILE matches
hasnt() {
    if grep -q -e "$2" "$1"; then
        ok 1 "$3"
        echo "#     a line matches: $2"
        sed 's/^/#     | /' "$1"
    else
        ok 0 "$3"
    fi
}
# run: the command, stdout in $tmp/out, stderr in $tmp/err, status in $rc
run() {
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# empty_dir DIR: absent, or a folder with nothing in it
empty_dir() {
    [ ! -e "$1" ] || [ -z "$(ls -A "$1")" ]
}
# lines FILE: its number of lines
lines() {
    wc -l <"$1" | tr -d ' '
}
