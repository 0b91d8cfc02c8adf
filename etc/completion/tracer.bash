# bash completion for tracer-report, tracer-run and tracerd
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installed once as tracer-report, with links tracer-run and tracerd, in
# bash-completion's completions directory, which loads it the first time
# one of these commands is completed.  The options come from each
# program's own --help, and tracer-report's fields from its
# --helpformat, so they never fall behind the program.  It uses nothing
# of bash-completion's own functions, so it works sourced by hand too.

# _tracer_options PROG: PROG's long options, one a line, from its --help;
# "--opt=" for one that takes an argument, "--opt" for one whose
# argument is optional ("--opt[=X]") or that takes none.
_tracer_options ()
{
    LC_ALL=C "$1" --help 2>/dev/null |
        sed -n 's/^ \{1,\}\(-[[:alnum:]], \)\{0,1\}\(--[a-z][a-z0-9-]*\)\(=\{0,1\}\).*/\2\3/p'
}

# _tracer_split: sets opt (the option whose value is being completed,
# empty if none) and cur (the word being completed), from COMP_WORDS,
# where bash splits "--opt=val" into "--opt", "=", "val".
_tracer_split ()
{
    local i=$COMP_CWORD
    cur=${COMP_WORDS[i]}
    opt=
    if [ "$cur" = "=" ] && [ "$i" -ge 1 ]; then
        opt=${COMP_WORDS[i - 1]}
        cur=
    elif [ "$i" -ge 2 ] && [ "${COMP_WORDS[i - 1]}" = "=" ]; then
        opt=${COMP_WORDS[i - 2]}
    elif [ "$i" -ge 1 ]; then
        case ${COMP_WORDS[i - 1]} in
            -[a-zA-Z]|--*) opt=${COMP_WORDS[i - 1]} ;;
        esac
        # an option that takes no value does not make this its value
        case $opt in
            --*) _tracer_options "$1" | grep -qx -- "$opt=" || opt= ;;
        esac
    fi
}

# _tracer_words LIST: complete cur from the words of LIST.
_tracer_words ()
{
    local IFS=$' \t\n'
    # shellcheck disable=SC2207
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
}

# _tracer_list LIST: complete the last element of a comma-separated cur.
_tracer_list ()
{
    local head= last=$cur w
    case $cur in
        *,*) head=${cur%,*},; last=${cur##*,} ;;
    esac
    COMPREPLY=()
    for w in $1; do
        case $w in
            "$last"*) COMPREPLY+=("$head$w") ;;
        esac
    done
    compopt -o nospace 2>/dev/null
}

_tracer_files ()
{
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    # shellcheck disable=SC2207
    COMPREPLY=($(compgen "${1:--f}" -- "$cur"))
}

_tracer_opts_reply ()
{
    local IFS=$'\n' w
    COMPREPLY=()
    for w in $(_tracer_options "$1"); do
        case $w in
            "$cur"*) COMPREPLY+=("$w") ;;
        esac
    done
    case ${COMPREPLY[*]} in
        *=) compopt -o nospace 2>/dev/null ;;
    esac
}

_tracer_report ()
{
    local cur opt prog=${COMP_WORDS[0]} w out_file=false
    _tracer_split "$prog"
    for w in "${COMP_WORDS[@]}"; do
        case $w in
            --html|--export|--export=*) out_file=true ;;
        esac
    done
    case $opt in
        -c|--config|--merge) _tracer_files; return ;;
        --store) _tracer_files -d; return ;;
        -o|--format)
            if $out_file; then
                _tracer_files
            else
                # sacct's names as sacct spells them and in lower case
                _tracer_list "$(LC_ALL=C "$prog" --helpformat 2>/dev/null |
                               sed -n 's/^\([a-zA-Z][a-zA-Z0-9_]*\) .*/\1/p' |
                               awk '{ print; if (tolower($0) != $0)
                                          print tolower($0) }')"
            fi
            return ;;
        -u|--user) _tracer_list "$(compgen -u)"; return ;;
        -s|--state)
            _tracer_list "CD F CA TO OOM R NF COMPLETED FAILED CANCELLED
                          TIMEOUT OUT_OF_MEMORY RUNNING NODE_FAIL"
            return ;;
        --summary) _tracer_words "array group name"; return ;;
        --output) _tracer_words "table sbatch nextflow snakemake json"; return ;;
        --by) _tracer_words "user account partition step tool group run"; return ;;
        --export) _tracer_words "opendc opendc-csv nextflow-trace"; return ;;
        --digest) _tracer_words "send print"; return ;;
        -j|--jobs|-A|--account|-p|--partition|-S|--starttime|-E|--endtime|\
        --name|--tag|--sort|--last|--shard|-M|--cluster|--run|--compare)
            return ;;
    esac
    case $cur in
        -*) _tracer_opts_reply "$prog" ;;
        *) _tracer_files ;;
    esac
}

_tracer_run ()
{
    local cur opt prog=${COMP_WORDS[0]} i
    # after "--": the command and its arguments
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = "--" ]; then
            if declare -F _command_offset >/dev/null; then
                _command_offset $((i + 1))
            elif [ $((i + 1)) -eq "$COMP_CWORD" ]; then
                cur=${COMP_WORDS[COMP_CWORD]}
                _tracer_files -c
            else
                cur=${COMP_WORDS[COMP_CWORD]}
                _tracer_files
            fi
            return
        fi
    done
    _tracer_split "$prog"
    case $opt in
        -o|--output|-c|--config) _tracer_files; return ;;
        -i|--interval|-t|--tag|--demo|--pipeline|--run-id) return ;;
    esac
    case $cur in
        -*) _tracer_opts_reply "$prog" ;;
        *) COMPREPLY=() ;;
    esac
}

_tracerd ()
{
    local cur opt prog=${COMP_WORDS[0]}
    _tracer_split "$prog"
    case $opt in
        -c|--config) _tracer_files; return ;;
    esac
    case $cur in
        -*) _tracer_opts_reply "$prog" ;;
        *) COMPREPLY=() ;;
    esac
}

complete -F _tracer_report tracer-report
complete -F _tracer_run tracer-run
complete -F _tracerd tracerd
