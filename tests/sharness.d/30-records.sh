# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Helpers for tests that check records: tolerance comparisons, and waits
# for what the daemons do asynchronously (forwarding, logging).

# within ACTUAL EXPECTED PCT: ACTUAL is within PCT percent of EXPECTED.
within ()
{
    awk -v a="$1" -v e="$2" -v p="$3" 'BEGIN {
        d = a - e; if (d < 0) d = -d;
        if (d <= e * p / 100) exit 0;
        printf "%s is not within %s%% of %s\n", a, p, e; exit 1 }'
}

# wait_record JOBID: poll the store (through tracer-report, with the
# cluster's TRACER_CONF) until the job's records arrive; they are left in
# rec.json.  tracerd forwards from its spool asynchronously.
wait_record ()
{
    _i=0
    while [ $_i -lt 60 ]; do
        "$TRACER_BUILDDIR/analysis/tracer-report" -j "$1" --json \
            >rec.json 2>rec.err && return 0
        sleep 0.5
        _i=$((_i + 1))
    done
    cat rec.err >&2
    return 1
}

# wait_log FILE PATTERN: wait until PATTERN (grep BRE) appears in FILE.
wait_log ()
{
    _i=0
    while [ $_i -lt 20 ]; do
        grep -q "$2" "$1" && return 0
        sleep 0.5
        _i=$((_i + 1))
    done
    echo "no '$2' in $1" >&2
    tail -20 "$1" >&2
    return 1
}
