#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='SPANK plugin ABI: exported symbols and library dependencies

tracer.so is loaded into slurmstepd, next to Slurm'"'"'s own log_*, list_*
and error symbols, so it must export only what Slurm looks up
(plugin_name, plugin_type, plugin_version, slurm_spank_*), as the version
script spank/spank_tracer.map says.  srun, sbatch and salloc load it on
login nodes too, so it may depend on libjansson and the C library only.'

: "${TRACER_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TRACER_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${SHARNESS_TEST_SRCDIR:=$TRACER_SRCDIR/tests}"
export TRACER_SRCDIR TRACER_BUILDDIR SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

so=$TRACER_BUILDDIR/spank/.libs/tracer.so
map=$TRACER_SRCDIR/spank/spank_tracer.map

# configure leaves the plugin out when Slurm's spank.h is missing; that
# build has nothing to check.  Where spank.h was found the plugin must be
# there.
if ! grep -q '^#define HAVE_SLURM_SPANK_H 1' "$TRACER_BUILDDIR/config.h"; then
    skip_all='the SPANK plugin is not configured (no slurm/spank.h)'
    test_done
fi

# The names a plugin may export, whatever the version script says.
allowed_name ()
{
    case $1 in
        plugin_name|plugin_type|plugin_version|slurm_spank_*) return 0 ;;
    esac
    return 1
}

# The patterns of the version script's global: section, one a line.
map_globals ()
{
    sed -e 's|/\*.*\*/||' -e 's|^[[:space:]]*||' -e 's|[[:space:]]*$||' \
        "$1" |
    awk '/^global:/ { g = 1; next }
         /^local:/  { g = 0; next }
         /^}/       { g = 0; next }
         g && /;$/  { sub (/;$/, ""); print }'
}

# check_symbols FILE MAP: every symbol in FILE (one a line) is allowed and
# matches a global pattern of MAP; prints the offenders.
check_symbols ()
{
    _bad=0
    _pats=$(map_globals "$2")
    while read -r _sym; do
        test -n "$_sym" || continue
        if ! allowed_name "$_sym"; then
            echo "not a plugin symbol: $_sym"
            _bad=1
            continue
        fi
        _ok=
        for _p in $_pats; do
            # shellcheck disable=SC2254
            case $_sym in $_p) _ok=t ;; esac
        done
        if test -z "$_ok"; then
            echo "not in $2: $_sym"
            _bad=1
        fi
    done <"$1"
    return $_bad
}

# NEEDED entries of a shared object, one a line.
needed ()
{
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

test_expect_success 'the plugin is built' '
    test -f "$so"
'

test_expect_success 'version script exports only plugin_* and slurm_spank_*' '
    map_globals "$map" >globals &&
    test -s globals &&
    while read -r p; do
        case $p in
            plugin_name|plugin_type|plugin_version|slurm_spank_\*) ;;
            *) echo "unexpected global in map: $p"; false ;;
        esac || return 1
    done <globals &&
    grep -q "^[[:space:]]*local:[[:space:]]*$" "$map" &&
    grep -q "^[[:space:]]*\*;[[:space:]]*$" "$map"
'

test_expect_success 'the symbol check rejects a stray export' '
    printf "%s\n" plugin_name slurm_spank_init tr_proto_request >stray &&
    test_must_fail check_symbols stray "$map" >out &&
    grep "not a plugin symbol: tr_proto_request" out &&
    printf "%s\n" plugin_name slurm_spank_init >clean &&
    check_symbols clean "$map"
'

test_expect_success 'nm -D lists only the plugin ABI' '
    nm -D --defined-only "$so" >nm.out &&
    awk "NF >= 3 { print \$3 } NF == 2 { print \$2 }" nm.out |
        sed "s/@.*//" | sort -u >exported &&
    test_debug "cat exported" &&
    check_symbols exported "$map"
'

test_expect_success 'plugin_name, plugin_type, plugin_version are exported' '
    for s in plugin_name plugin_type plugin_version; do
        grep -qx "$s" exported || { echo "missing: $s"; return 1; }
    done
'

test_expect_success 'the spank callbacks are exported' '
    for s in slurm_spank_init slurm_spank_task_post_fork \
             slurm_spank_task_exit slurm_spank_exit; do
        grep -qx "$s" exported || { echo "missing: $s"; return 1; }
    done
'

test_expect_success 'no libtracer symbol is left undefined' '
    nm -D --undefined-only "$so" >undef &&
    test_debug "cat undef" &&
    ! grep -E "[[:space:]]tr_[a-z0-9_]+$" undef
'

test_expect_success 'NEEDED holds no libyaml, libhwloc, libmunge, libcrypto' '
    needed "$so" >needed.out &&
    test_debug "cat needed.out" &&
    test -s needed.out &&
    ! grep -E "^lib(yaml|hwloc|munge|crypto)[-.]" needed.out
'

test_expect_success 'NEEDED holds only libjansson and the C library' '
    while read -r lib; do
        case $lib in
            libjansson.so.*|libc.so.*|ld-linux*.so.*) ;;
            *) echo "unexpected dependency: $lib"; false ;;
        esac || return 1
    done <needed.out &&
    grep -q "^libjansson\.so\." needed.out
'

test_done
