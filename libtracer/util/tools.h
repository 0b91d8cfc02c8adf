/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TRACER_TOOLS_H
#define TRACER_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

/* Names of the tool table as users name their tools: "samtools sort"
 * rather than "samtools", the script an interpreter runs ("align.py"
 * rather than "python3.11"), "gatk HaplotypeCaller" and "picard
 * MarkDuplicates" rather than "java", the program "env" or a shim ends
 * up running.  One rule table (tools.c, documented in doc/tools.md)
 * says which programs are named from their arguments and how; a site
 * adds programs in tracer.yaml (tools.subcommands, tools.interpreters).
 *
 * Arguments are the job's own data: a word taken from them is used only
 * when it is 1..TR_TOOLS_WORD_MAX bytes of [A-Za-z0-9._+-], starting with
 * a letter, digit or '_' (a subcommand: with a letter); anything else
 * names the tool by its program.
 */

#define TR_TOOLS_WORD_MAX 40
#define TR_TOOLS_NAME_MAX 256 /* the record's bound on tools[].name */

enum tr_tools_kind {
    TR_TOOLS_SUBCMD, /* "prog sub": the first argument is a subcommand */
    TR_TOOLS_INTERP, /* the script it runs, itself looked up again */
    TR_TOOLS_ENV,    /* the program it runs (env), looked up again */
    TR_TOOLS_JAVA,   /* "-jar x.jar" or the main class, looked up again */
    TR_TOOLS_ALIAS,  /* a jar or main class standing for a program */
};

struct tr_tools_rule {
    const char *match; /* fnmatch(3) pattern on a program's base name */
    enum tr_tools_kind kind;
    const char *as;     /* ALIAS: the program it stands for */
    const char *value;  /* options taking the next argument as value,
                         * separated by spaces ("-W -X") */
    const char *code;   /* INTERP: options whose value is program text:
                         * the tool is the interpreter */
    const char *module; /* INTERP: options whose value names the tool
                         * (python -m) */
    const char *file;   /* INTERP: a "--opt=" whose value is the script */
    bool no_script;     /* INTERP: a plain argument is not the script */
};

/* The scheduler's own processes, which run in a step's cgroup beside
 * the user's programs (Slurm's slurmstepd, "slurmstepd-wlm" as Debian
 * installs it; PBS's and Torque's pbs_mom before it execs the job
 * shell, pbs_attach and Torque's pbs_demux; tracer-prolog as LSF's
 * job starter, the root of the tree tracerd follows): the job view
 * leaves them out of a step's tools.  Their CPU time and memory still count in the
 * step's totals, which the cgroup measures.  fnmatch(3) patterns,
 * NULL-terminated.
 */
extern const char *const tr_tools_scheduler_procs[];

/* Whether a tool name (tools[].name of a record) matches one of
 * tr_tools_scheduler_procs.
 */
bool tr_tools_scheduler_own (const char *name);

/* The built-in rules, ending with an entry whose match is NULL. */
extern const struct tr_tools_rule tr_tools_rules[];

/* A site's additions (tracer.yaml tools.subcommands and
 * tools.interpreters): NULL-terminated lists of patterns, either NULL.
 * They are looked at before the built-in rules.
 */
struct tr_tools_site {
    const char *const *subcommands;
    const char *const *interpreters;
};

/* Whether the name of a program is taken from its arguments: true when a
 * rule matches program (an executable's base name).  site may be NULL.
 */
bool tr_tools_ruled (const struct tr_tools_site *site, const char *program);

/* The tool name of a process into out (size bytes, at least 64): program
 * is its executable's base name (else its comm), comm the kernel's
 * command name (may be NULL), argv its argc arguments (argv[0] the
 * program as called; NULL when unknown: then a script is named from comm
 * where comm differs from the interpreter, as the kernel sets it for a
 * "#!" script).  Returns out.  Never fails: what no rule names is the
 * program, cut to size bytes.
 */
const char *tr_tools_name (const struct tr_tools_site *site,
                           const char *program,
                           const char *comm,
                           const char *const *argv,
                           size_t argc,
                           char *out,
                           size_t size);

/* Whether s is a pattern a site may give in tracer.yaml: 1..64 bytes of
 * [A-Za-z0-9._+-] and the fnmatch(3) characters * ? [ ] !.
 */
bool tr_tools_pattern_ok (const char *s);

#endif /* !TRACER_TOOLS_H */
