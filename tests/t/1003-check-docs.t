#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='documentation matches the code

Every configuration key of the schema (libtracer/conf/conf.h, cross-checked
with the schema table in conf.c) is documented in etc/tracer.yaml and
tracer.yaml(5); every option of every program is in its man page and its
--help; the man pages render without groff warnings and have the
sections a reader looks for; --help and --version work.'

: "${TRACER_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TRACER_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${SHARNESS_TEST_SRCDIR:=$TRACER_SRCDIR/tests}"
export TRACER_SRCDIR TRACER_BUILDDIR SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

LC_ALL=C
export LC_ALL
src=$TRACER_SRCDIR
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
    "$TRACER_BUILDDIR/config.h")

# Programs: source:man page:binary ("-": not a command of its own).
programs="collector/tracerd.c:collector/tracerd.8.in:collector/tracerd
collector/tracer-run.c:collector/tracer-run.1.in:collector/tracer-run
analysis/tracer-report.c:analysis/tracer-report.1.in:analysis/tracer-report
analysis/tracer-mail.c:analysis/tracer-mail.8.in:analysis/tracer-mail
prolog/tracer-prolog.c:prolog/tracer-prolog.8.in:prolog/tracer-prolog
spank/spank_tracer.c:spank/tracer-spank.8.in:-"

# Long option names of a source's option table ({ "name", ...), one a
# line.  getopt_long tables and the SPANK option table share the layout.
long_options ()
{
    sed -n 's/^[[:space:]]*{ *"\([a-z][a-z0-9-]*\)",.*/\1/p' "$1"
}

# Short options of the getopt_long call's option string.
short_options ()
{
    sed -n 's/.*getopt_long ([^"]*"+\{0,1\}\([^"]*\)".*/\1/p' "$1" |
    tr -d ':' | sed 's/./&\n/g' | sed '/^$/d'
}

# The roff spelling of an option: every "-" becomes "\-".
roff_opt ()
{
    printf '%s\n' "$1" | sed 's/-/\\-/g'
}

# Configuration keys named in the field comments of conf.h
# ("section.key" or "section.subsection.key").
conf_h_keys ()
{
    grep -o '/\* [a-z_]*\.[a-z_.]*' "$src/libtracer/conf/conf.h" |
    sed -e 's|^/\* ||' -e 's|\.*$||' | LC_ALL=C sort -u
}

# Keys of the schema table in conf.c (.section = "s", then .name = "k").
conf_c_keys ()
{
    sed -n \
        -e 's/^[[:space:]]*{\{0,1\}[[:space:]]*\.section = "\([a-z_.]*\)".*/S \1/p' \
        -e 's/^[[:space:]]*\.name = "\([a-z_]*\)".*/N \1/p' \
        "$src/libtracer/conf/conf.c" |
    awk '$1 == "S" { s = $2; next }
         $1 == "N" && s != "" { print s "." $2; s = "" }' |
    LC_ALL=C sort -u
}

# section.key of every key line in a tracer.yaml, commented out or not:
# a top-level "section:" line, then indented "key:" or "#key:" lines
# (prose comments have a blank after the '#').  An indented "name:" line
# with no value, not commented out, opens a subsection: the keys
# indented under it are section.name.key.
yaml_keys ()
{
    awk 'function path (ind,   i, p) {
             p = ""
             for (i = 0; i < ind; i++)
                 if (i in hdr) p = (p == "" ? "" : p ".") hdr[i]
             return p
         }
         /^#?[a-z_]+:/ && !/^[a-z_]+:[[:space:]]*(#.*)?$/ {
             if (/^[a-z_]+:/) { for (i in hdr) delete hdr[i] }
             next
         }
         /^[[:space:]]*#?[a-z_]+:/ {
             line = $0
             ind = match (line, /[^[:space:]]/) - 1
             body = substr (line, ind + 1)
             c = substr (body, 1, 1) == "#"
             if (c) body = substr (body, 2)
             k = body; sub (/:.*/, "", k)
             v = body; sub (/^[a-z_]+:[[:space:]]*/, "", v); sub (/#.*/, "", v)
             for (i in hdr) if (i + 0 >= ind) delete hdr[i]
             if (!c && v == "") { hdr[ind] = k; next }
             p = path(ind)
             if (p != "") print p "." k
         }' "$1" | LC_ALL=C sort -u
}

# A man page with its @...@ values filled in, as config/man.mk does.
subst_man ()
{
    sed -e "s|[@]VERSION[@]|$version|g" \
        -e 's|[@]sysconfdir[@]|/etc|g' \
        -e 's|[@]localstatedir[@]|/var|g' \
        -e 's|[@]runstatedir[@]|/run|g' \
        -e 's|[@]sbindir[@]|/usr/sbin|g' \
        -e 's|[@]bindir[@]|/usr/bin|g' \
        -e 's|[@]datadir[@]|/usr/share|g' \
        -e 's|[@]slurmplugindir[@]|/usr/lib/slurm|g' "$1"
}

# The .SH headings of a man page, one a line, quotes removed.
man_sections ()
{
    sed -n 's/^\.SH[[:space:]]*//p' "$1" | tr -d '"'
}

test_expect_success 'the version is known' '
    test -n "$version"
'

test_expect_success 'conf.h names the configuration keys' '
    conf_h_keys >keys &&
    test_debug "cat keys" &&
    test $(wc -l <keys) -ge 10 &&
    grep -qx "sampling.interval" keys &&
    grep -qx "store.path" keys
'

test_expect_success 'conf.h and the schema in conf.c name the same keys' '
    conf_c_keys >schema_keys &&
    test -s schema_keys &&
    test_cmp keys schema_keys
'

test_expect_success 'the yaml key scan sees sections and commented keys' '
    cat >probe.yaml <<-\EOF &&
	# prose: not a key
	alpha:
	  # one: prose, a blank after the hash
	  #two: 2
	  three: 3
	beta:
	  #four: [root]
	  sub:
	    #five: 5
	    six: 6
	  seven: 7
	gamma:
	  #eight: 8
	EOF
    yaml_keys probe.yaml >probe.keys &&
    printf "%s\n" alpha.three alpha.two beta.four beta.seven beta.sub.five \
        beta.sub.six gamma.eight >probe.expect &&
    test_cmp probe.expect probe.keys
'

test_expect_success 'every key is documented in etc/tracer.yaml' '
    yaml_keys "$src/etc/tracer.yaml" >yaml_keys &&
    test_debug "cat yaml_keys" &&
    comm -23 keys yaml_keys >missing &&
    if test -s missing; then
        echo "keys missing from etc/tracer.yaml:" && cat missing && false
    fi
'

test_expect_success 'etc/tracer.yaml shows no key the schema lacks' '
    comm -13 keys yaml_keys >extra &&
    if test -s extra; then
        echo "unknown keys in etc/tracer.yaml:" && cat extra && false
    fi
'

test_expect_success 'every key is documented in tracer.yaml(5)' '
    rc=0 &&
    while read -r k; do
        re=$(printf "%s\n" "$k" | sed "s/\./\\\\./g") &&
        grep -Eq "(^|[^a-z_.])$re(\$|[^a-z_])" "$src/etc/tracer.yaml.5.in" ||
            { echo "not in tracer.yaml.5.in: $k"; rc=1; }
    done <keys &&
    test $rc = 0
'

test_expect_success 'long-option scan reads the option tables' '
    long_options "$src/collector/tracer-run.c" >run.opts &&
    grep -qx "no-cgroup" run.opts &&
    grep -qx "version" run.opts &&
    long_options "$src/spank/spank_tracer.c" >spank.opts &&
    grep -qx "tracer" spank.opts &&
    short_options "$src/analysis/tracer-report.c" >report.short &&
    grep -qx "j" report.short &&
    grep -qx "V" report.short
'

for p in $programs; do
    c=${p%%:*}
    rest=${p#*:}
    man=${rest%%:*}
    bin=${rest#*:}
    name=${man##*/}
    name=${name%.in}

    test_expect_success "$name: every long option of $c is documented" '
        long_options "$src/$c" >opts &&
        test -s opts &&
        rc=0 &&
        while read -r o; do
            r=$(roff_opt "$o") &&
            grep -qF "\\-\\-$r" "$src/$man" ||
                { echo "$man: no \\-\\-$r"; rc=1; }
        done <opts &&
        test $rc = 0
    '

    test_expect_success "$name: every short option of $c is documented" '
        short_options "$src/$c" >short &&
        rc=0 &&
        while read -r o; do
            grep -Eq "\\\\-$o([^a-zA-Z0-9\\\\]|\$)" "$src/$man" ||
                { echo "$man: no \\-$o"; rc=1; }
        done <short &&
        test $rc = 0
    '

    test_expect_success "$name: OPTIONS documents no option $c lacks" '
        long_options "$src/$c" >opts &&
        sed -n "/^\\.SH OPTIONS/,/^\\.SH /p" "$src/$man" |
        sed -n "/^\\.TP/{n;p;}" |
        grep -o "\\\\-\\\\-[a-z0-9\\\\-]*" |
        sed -e "s/\\\\-/-/g" -e "s/^--//" | sort -u >documented &&
        test -s documented &&
        sort -u opts >opts.sorted &&
        comm -23 documented opts.sorted >unknown &&
        if test -s unknown; then
            echo "$man documents options $c does not have:" &&
            cat unknown && false
        fi
    '

    test "$bin" = - && continue

    test_expect_success "$name: --help exits 0 and lists every option" '
        "$TRACER_BUILDDIR/$bin" --help >help &&
        grep -q "^Usage: " help &&
        rc=0 &&
        while read -r o; do
            grep -q -- "--$o" help || { echo "--help lacks --$o"; rc=1; }
        done <opts &&
        test $rc = 0
    '

    test_expect_success "$name: --version prints $version" '
        "$TRACER_BUILDDIR/$bin" --version >out &&
        echo "${bin##*/} $version" >expect &&
        test_cmp expect out
    '
done

# Every hand-written man page of the tree.
man_pages=$(cd "$src" && for d in collector analysis spank prolog etc; do
    ls "$d"/*.[1-8].in 2>/dev/null; done)

test_expect_success 'the man pages are found' '
    echo "$man_pages" >pages &&
    test_debug "cat pages" &&
    grep -q "tracerd.8.in" pages &&
    grep -q "tracer.7.in" pages &&
    grep -q "tracer.yaml.5.in" pages
'

test_expect_success 'groff catches a broken page' '
    printf "%s\n" ".TH BAD 1" ".SH NAME" "bad \\- page" ".BOGUS macro" \
        ".ft Q" >bad.1 &&
    { groff -man -Tutf8 -ww -z bad.1 2>bad.err || :; } &&
    test_debug "cat bad.err" &&
    grep -q BOGUS bad.err
'

for page in $man_pages; do
    base=${page##*/}
    base=${base%.in}
    sec=${base##*.}
    title=$(echo "${base%.*}" | tr a-z A-Z)

    test_expect_success "$base renders without groff warnings" '
        subst_man "$src/$page" >"$base" &&
        ! grep -n "@[a-zA-Z_][a-zA-Z_]*@" "$base" &&
        groff -man -Tutf8 -ww -z "$base" 2>groff.err &&
        if test -s groff.err; then cat groff.err; false; fi
    '

    test_expect_success "$base has a .TH line for $title($sec)" '
        sed -n "s/^\\.TH[[:space:]]*//p" "$src/$page" | sed 1q |
            awk "{ print \$1, \$2 }" | tr -d "\"" |
            sed "s/\\\\-/-/g" >th &&
        echo "$title $sec" >th.expect &&
        test_cmp th.expect th
    '

    test_expect_success "$base has the sections of a section $sec page" '
        man_sections "$src/$page" >sections &&
        need="NAME DESCRIPTION" &&
        case $sec in
        1|8) need="$need SYNOPSIS OPTIONS ENVIRONMENT" ;;
        esac &&
        rc=0 &&
        for s in $need "SEE ALSO"; do
            grep -qx "$s" sections || { echo "$page: no .SH $s"; rc=1; }
        done &&
        case $sec in
        1|8) grep -qx "EXIT STATUS" sections ||
             { echo "$page: no .SH EXIT STATUS"; rc=1; } ;;
        esac &&
        test $rc = 0
    '
done

test_expect_success 'the root components document their security model' '
    for p in collector/tracerd.8.in spank/tracer-spank.8.in; do
        man_sections "$src/$p" >sections &&
        grep -qx "SECURITY" sections || { echo "$p: no SECURITY"; return 1; }
    done
'

test_expect_success 'tracer-report(1) documents every field of --helpformat' '
    "$TRACER_BUILDDIR/analysis/tracer-report" --helpformat >fields &&
    test $(wc -l <fields) -gt 50 &&
    sed -n "/^\.SH FIELDS/,/^\.SH /p" "$src/analysis/tracer-report.1.in" \
        >fields.man &&
    rc=0 &&
    # a help too long for the line goes on under its column: skip those
    grep -v "^ " fields >names &&
    while read -r f kind help; do
        case "$f$kind$help" in ""|*:) continue ;; esac
        grep -qx "\.B $f" fields.man || { echo "no field $f"; rc=1; }
    done <names &&
    test $rc = 0
'

# The bash completion (etc/completion/tracer.bash) reads each program's
# --help: it offers every long option of the option table.
for p in collector/tracer-run analysis/tracer-report collector/tracerd; do
    name=${p##*/}
    test_expect_success "bash completion offers every long option of $name" '
        long_options "$src/$p.c" | sed "s/^/--/" | LC_ALL=C sort -u >want &&
        test -s want &&
        fn=$(sed -n "s/^complete -F \(_[a-z_]*\) $name\$/\1/p" \
            "$src/etc/completion/tracer.bash") &&
        test -n "$fn" &&
        PATH=$TRACER_BUILDDIR/${p%/*}:$PATH bash -c "
            . \"$src/etc/completion/tracer.bash\"
            COMP_WORDS=($name --); COMP_CWORD=1; $fn
            printf \"%s\\n\" \"\${COMPREPLY[@]}\"" >got.raw &&
        sed "s/=\$//" got.raw | LC_ALL=C sort -u >got &&
        comm -23 want got >missing &&
        if test -s missing; then
            echo "completion of $name lacks:" && cat missing && false
        fi
    '
done

test_done
