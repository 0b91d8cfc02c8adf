/* Copyright (C) 2026 The tracer authors.
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Tool names as users name their tools (tools.h).  The rules are data:
 * tr_tools_rules[] below, documented in doc/tools.md.  A name is
 * resolved in steps, each looking the word it found up again: "env"
 * finds "python3", "python3" finds the script "gatk", "gatk" (a
 * multi-command tool) takes its subcommand.  At most DEPTH_MAX steps, so
 * a loop of rules ends.
 *
 * Everything taken from the arguments is the job's data: only words of
 * safe characters, at most TR_TOOLS_WORD_MAX bytes, are used; anything
 * else ends the search with the name found so far.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "tools.h"

#define DEPTH_MAX 6
#define SUBCMD_ARGS 4 /* arguments looked at for a subcommand */

/* Options of the shells, interpreters and java. */
#define SH_CODE "-c"
#define SH_VALUE "-o -O +o +O --rcfile --init-file"
#define PY_VALUE "-W -X -Q --check-hash-based-pycs"
#define JAVA_VALUE                                                         \
    "-cp -classpath --class-path -p --module-path --upgrade-module-path "  \
    "--add-modules --add-opens --add-exports --add-reads --limit-modules " \
    "--patch-module --enable-native-access"

/* clang-format off */
const struct tr_tools_rule tr_tools_rules[] = {
    /* multi-command tools: "samtools sort" */
    { .match = "samtools", .kind = TR_TOOLS_SUBCMD },
    { .match = "bcftools", .kind = TR_TOOLS_SUBCMD },
    { .match = "bwa", .kind = TR_TOOLS_SUBCMD },
    { .match = "bwa-mem2", .kind = TR_TOOLS_SUBCMD },
    { .match = "bedtools", .kind = TR_TOOLS_SUBCMD },
    { .match = "bamtools", .kind = TR_TOOLS_SUBCMD },
    { .match = "sambamba", .kind = TR_TOOLS_SUBCMD },
    { .match = "seqkit", .kind = TR_TOOLS_SUBCMD },
    { .match = "salmon", .kind = TR_TOOLS_SUBCMD },
    { .match = "kallisto", .kind = TR_TOOLS_SUBCMD },
    { .match = "cellranger", .kind = TR_TOOLS_SUBCMD },
    { .match = "spaceranger", .kind = TR_TOOLS_SUBCMD },
    { .match = "diamond", .kind = TR_TOOLS_SUBCMD },
    { .match = "mmseqs", .kind = TR_TOOLS_SUBCMD },
    { .match = "vg", .kind = TR_TOOLS_SUBCMD },
    { .match = "umi_tools", .kind = TR_TOOLS_SUBCMD },
    { .match = "sourmash", .kind = TR_TOOLS_SUBCMD },
    { .match = "gatk", .kind = TR_TOOLS_SUBCMD, .value = "--java-options" },
    { .match = "picard", .kind = TR_TOOLS_SUBCMD },
    { .match = "nextflow", .kind = TR_TOOLS_SUBCMD },
    { .match = "conda", .kind = TR_TOOLS_SUBCMD },
    { .match = "mamba", .kind = TR_TOOLS_SUBCMD },
    { .match = "micromamba", .kind = TR_TOOLS_SUBCMD },
    { .match = "pip", .kind = TR_TOOLS_SUBCMD },
    { .match = "pip3*", .kind = TR_TOOLS_SUBCMD },
    { .match = "git", .kind = TR_TOOLS_SUBCMD,
      .value = "-C -c --git-dir --work-tree --namespace" },
    { .match = "apptainer", .kind = TR_TOOLS_SUBCMD },
    { .match = "singularity", .kind = TR_TOOLS_SUBCMD },
    /* interpreters: the script they run */
    { .match = "python", .kind = TR_TOOLS_INTERP, .code = "-c",
      .module = "-m", .value = PY_VALUE },
    { .match = "python[23]*", .kind = TR_TOOLS_INTERP, .code = "-c",
      .module = "-m", .value = PY_VALUE },
    { .match = "pypy*", .kind = TR_TOOLS_INTERP, .code = "-c",
      .module = "-m", .value = PY_VALUE },
    { .match = "perl", .kind = TR_TOOLS_INTERP, .code = "-e -E",
      .value = "-I -M -m -x" },
    { .match = "perl5*", .kind = TR_TOOLS_INTERP, .code = "-e -E",
      .value = "-I -M -m -x" },
    { .match = "Rscript", .kind = TR_TOOLS_INTERP, .code = "-e" },
    /* Rscript runs R as "R --no-echo --no-restore --file=script.R" */
    { .match = "R", .kind = TR_TOOLS_INTERP, .code = "-e",
      .value = "-f", .file = "--file=", .no_script = true },
    { .match = "ruby", .kind = TR_TOOLS_INTERP, .code = "-e",
      .value = "-I -r -C" },
    { .match = "node", .kind = TR_TOOLS_INTERP, .code = "-e -p --eval --print",
      .value = "-r --require" },
    { .match = "bash", .kind = TR_TOOLS_INTERP, .code = SH_CODE,
      .value = SH_VALUE },
    { .match = "sh", .kind = TR_TOOLS_INTERP, .code = SH_CODE,
      .value = SH_VALUE },
    { .match = "dash", .kind = TR_TOOLS_INTERP, .code = SH_CODE,
      .value = SH_VALUE },
    { .match = "zsh", .kind = TR_TOOLS_INTERP, .code = SH_CODE,
      .value = SH_VALUE },
    { .match = "ksh*", .kind = TR_TOOLS_INTERP, .code = SH_CODE,
      .value = SH_VALUE },
    /* programs that run another (exec): the program they run */
    { .match = "env", .kind = TR_TOOLS_ENV, .value = "-u -C --unset --chdir" },
    { .match = "java", .kind = TR_TOOLS_JAVA, .value = JAVA_VALUE },
    /* jars and main classes of multi-command tools */
    { .match = "picard.jar", .kind = TR_TOOLS_ALIAS, .as = "picard" },
    { .match = "picard-*.jar", .kind = TR_TOOLS_ALIAS, .as = "picard" },
    { .match = "picard.cmdline.PicardCommandLine", .kind = TR_TOOLS_ALIAS,
      .as = "picard" },
    { .match = "gatk-package-*.jar", .kind = TR_TOOLS_ALIAS, .as = "gatk" },
    { .match = "gatk.jar", .kind = TR_TOOLS_ALIAS, .as = "gatk" },
    { .match = "org.broadinstitute.hellbender.Main", .kind = TR_TOOLS_ALIAS,
      .as = "gatk" },
    { .match = "nextflow.cli.Launcher", .kind = TR_TOOLS_ALIAS,
      .as = "nextflow" },
    { .match = NULL },
};
/* clang-format on */

static const struct tr_tools_rule site_subcmd = { .match = "",
                                                  .kind = TR_TOOLS_SUBCMD };
static const struct tr_tools_rule site_interp = { .match = "",
                                                  .kind = TR_TOOLS_INTERP,
                                                  .code = "-c -e" };

static bool in_list (const char *list, const char *s)
{
    size_t n = strlen (s);
    const char *p = list;

    if (!list || n == 0)
        return false;
    while ((p = strstr (p, s))) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
        p += n;
    }
    return false;
}

static bool matches (const char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (fnmatch (list[i], name, 0) == 0)
            return true;
    return false;
}

const char *const tr_tools_scheduler_procs[] = {
    "slurmstepd",
    "slurmstepd-*",
    "pbs_mom",
    "pbs_attach",
    "pbs_demux",
    /* tracer's own LSF job starter, the root of the tree it follows */
    "tracer-prolog",
    NULL,
};

bool tr_tools_scheduler_own (const char *name)
{
    return name && matches (tr_tools_scheduler_procs, name);
}

static const struct tr_tools_rule *find (const struct tr_tools_site *site,
                                         const char *name)
{
    if (!name || !*name)
        return NULL;
    if (site && matches (site->subcommands, name))
        return &site_subcmd;
    if (site && matches (site->interpreters, name))
        return &site_interp;
    for (const struct tr_tools_rule *r = tr_tools_rules; r->match; r++)
        if (fnmatch (r->match, name, 0) == 0)
            return r;
    return NULL;
}

static bool safe_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+'
           || c == '-';
}

/* A word of the arguments fit to name a tool: 1..TR_TOOLS_WORD_MAX safe
 * characters, the first a letter (subcommand) or a letter, digit or '_'.
 */
static bool word_ok (const char *s, bool letter_first)
{
    size_t n = 0;
    char c;

    if (!s || !(c = s[0]))
        return false;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        && (letter_first || !((c >= '0' && c <= '9') || c == '_')))
        return false;
    for (; s[n]; n++)
        if (n >= TR_TOOLS_WORD_MAX || !safe_char (s[n]))
            return false;
    return true;
}

static const char *base (const char *path)
{
    const char *s = strrchr (path, '/');

    return s ? s + 1 : path;
}

static void resolve (const struct tr_tools_site *site,
                     const char *name,
                     const char *comm,
                     const char *const *argv,
                     size_t argc,
                     int depth,
                     char *out,
                     size_t size);

/* Named by the word w of the arguments (looked up again with the
 * arguments from argv[0] = w on), else left as it is.
 */
static void follow (const struct tr_tools_site *site,
                    const char *w,
                    const char *const *argv,
                    size_t argc,
                    int depth,
                    char *out,
                    size_t size)
{
    if (w && word_ok (base (w), false))
        resolve (site, base (w), NULL, argv, argc, depth + 1, out, size);
}

/* Without arguments: a "#!" script's comm is the script's name (the
 * kernel's, cut to 15 bytes), unless it names an interpreter itself.
 */
static void from_comm (const struct tr_tools_site *site,
                       const char *name,
                       const char *comm,
                       int depth,
                       char *out,
                       size_t size)
{
    const struct tr_tools_rule *r;

    if (!comm || !strcmp (comm, name) || !word_ok (comm, false))
        return;
    r = find (site, comm);
    if (r && r->kind != TR_TOOLS_SUBCMD && r->kind != TR_TOOLS_ALIAS)
        return;
    resolve (site, comm, NULL, NULL, 0, depth + 1, out, size);
}

static void subcmd (const struct tr_tools_rule *r,
                    const char *name,
                    const char *const *argv,
                    size_t argc,
                    char *out,
                    size_t size)
{
    for (size_t i = 1; i < argc && i <= SUBCMD_ARGS; i++) {
        const char *a = argv[i];
        if (in_list (r->value, a)) {
            i++;
            continue;
        }
        if (a[0] == '-' && r->value)
            continue; /* a flag of a tool whose options are known */
        if (word_ok (a, true) && strlen (name) + 1 + strlen (a) < size)
            snprintf (out, size, "%s %s", name, a);
        return;
    }
}

static void interp (const struct tr_tools_site *site,
                    const struct tr_tools_rule *r,
                    const char *const *argv,
                    size_t argc,
                    int depth,
                    char *out,
                    size_t size)
{
    for (size_t i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t fl = r->file ? strlen (r->file) : 0;

        if (fl && !strncmp (a, r->file, fl)) {
            follow (site, a + fl, argv + i, argc - i, depth, out, size);
            return;
        }
        if (!strcmp (a, "--")) {
            if (!r->no_script && i + 1 < argc)
                follow (site, argv[i + 1], argv + i + 1, argc - i - 1, depth,
                        out, size);
            return;
        }
        if ((a[0] == '-' || a[0] == '+') && a[1] && a[1] == '-') {
            if (in_list (r->code, a))
                return;
            if (in_list (r->module, a)) {
                if (i + 1 < argc)
                    follow (site, argv[i + 1], argv + i + 1, argc - i - 1,
                            depth, out, size);
                return;
            }
            if (in_list (r->value, a))
                i++;
            continue;
        }
        if ((a[0] == '-' || a[0] == '+') && a[1]) {
            /* a cluster of short options: "-uc", "-Wignore", "-m pip" */
            for (size_t j = 1; a[j]; j++) {
                char opt[3] = { a[0], a[j], '\0' };
                const char *v;
                if (in_list (r->code, opt))
                    return;
                if (!in_list (r->module, opt) && !in_list (r->value, opt))
                    continue;
                v = a[j + 1] ? a + j + 1 : i + 1 < argc ? argv[++i] : NULL;
                if (in_list (r->module, opt)) {
                    follow (site, v, argv + i, argc - i, depth, out, size);
                    return;
                }
                if (opt[1] == 'f' && r->no_script) {
                    follow (site, v, argv + i, argc - i, depth, out, size);
                    return;
                }
                break;
            }
            continue;
        }
        if (r->no_script)
            continue;
        follow (site, a, argv + i, argc - i, depth, out, size);
        return;
    }
}

static void env (const struct tr_tools_site *site,
                 const struct tr_tools_rule *r,
                 const char *const *argv,
                 size_t argc,
                 int depth,
                 char *out,
                 size_t size)
{
    for (size_t i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-') {
            /* -S splits a string into the command: not followed */
            if (!strncmp (a, "--split-string", 14)
                || (a[1] != '-' && strchr (a, 'S')))
                return;
            if (in_list (r->value, a))
                i++;
            continue;
        }
        if (strchr (a, '='))
            continue; /* NAME=VALUE */
        follow (site, a, argv + i, argc - i, depth, out, size);
        return;
    }
}

static void java (const struct tr_tools_site *site,
                  const struct tr_tools_rule *r,
                  const char *const *argv,
                  size_t argc,
                  int depth,
                  char *out,
                  size_t size)
{
    for (size_t i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *dot;
        if (!strcmp (a, "-jar")) {
            if (i + 1 < argc)
                follow (site, argv[i + 1], argv + i + 1, argc - i - 1, depth,
                        out, size);
            return;
        }
        if (in_list (r->value, a)) {
            i++;
            continue;
        }
        if (a[0] == '@')
            return; /* options from a file */
        if (a[0] == '-')
            continue;
        /* the main class: in full, else its last part */
        if (!word_ok (a, false) && (dot = strrchr (a, '.')))
            a = dot + 1;
        if (word_ok (a, false))
            resolve (site, a, NULL, argv + i, argc - i, depth + 1, out, size);
        return;
    }
}

static void resolve (const struct tr_tools_site *site,
                     const char *name,
                     const char *comm,
                     const char *const *argv,
                     size_t argc,
                     int depth,
                     char *out,
                     size_t size)
{
    const struct tr_tools_rule *r;

    snprintf (out, size, "%s", name);
    if (depth >= DEPTH_MAX || !(r = find (site, name)))
        return;
    if (r->kind == TR_TOOLS_ALIAS) {
        resolve (site, r->as, NULL, argv, argc, depth + 1, out, size);
        return;
    }
    if (!argv || argc == 0) {
        if (r->kind != TR_TOOLS_SUBCMD)
            from_comm (site, name, comm, depth, out, size);
        return;
    }
    switch (r->kind) {
    case TR_TOOLS_SUBCMD:
        subcmd (r, name, argv, argc, out, size);
        break;
    case TR_TOOLS_INTERP:
        interp (site, r, argv, argc, depth, out, size);
        break;
    case TR_TOOLS_ENV:
        env (site, r, argv, argc, depth, out, size);
        break;
    case TR_TOOLS_JAVA:
        java (site, r, argv, argc, depth, out, size);
        break;
    case TR_TOOLS_ALIAS:
        break;
    }
}

bool tr_tools_ruled (const struct tr_tools_site *site, const char *program)
{
    return find (site, program) != NULL;
}

const char *tr_tools_name (const struct tr_tools_site *site,
                           const char *program,
                           const char *comm,
                           const char *const *argv,
                           size_t argc,
                           char *out,
                           size_t size)
{
    if (!out || size == 0)
        return out;
    out[0] = '\0';
    if (!program || !*program)
        program = comm && *comm ? comm : "?";
    resolve (site, program, comm, argv, argc, 0, out, size);
    return out;
}

bool tr_tools_pattern_ok (const char *s)
{
    size_t n = 0;

    if (!s || !*s)
        return false;
    for (; s[n]; n++)
        if (n >= 64 || !(safe_char (s[n]) || strchr ("*?[]!", s[n])))
            return false;
    return true;
}
