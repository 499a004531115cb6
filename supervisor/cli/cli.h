/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The corral command-line front end (a client of libcorral's public API). */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

#include <stdbool.h>

#include "corral.h"

#define CLI_EXIT_TIMEOUT 124
#define CLI_EXIT_ERROR 125
#define CLI_EXIT_NOEXEC 126
#define CLI_EXIT_NOTFOUND 127

/* Options shared by run, probe, check and policy show. */
struct cli_common {
	struct corral_policy *policy; /* loaded --policy (or defaults) with every flag overlaid */
	bool json;
	const char *shell;            /* run -c STRING */
	bool have_policy_file;
	/* run --stdin: pass the caller's stdin, or /dev/null (default: null with --json, else pass) */
	enum { CLI_STDIN_DEFAULT = 0, CLI_STDIN_PASS, CLI_STDIN_NULL } stdin_mode;
};

/*
 * Parse the options of DESIGN.md's `run` table (and --json, --policy, -c
 * where |allow_shell|) from argv[1..]; stops at the first non-option or
 * "--". Loads --policy first, then overlays every flag in order. Fills
 * *optind_out with the index of the first operand. On error prints the
 * message (JSON when --json was seen) and returns CLI_EXIT_ERROR; returns
 * -1 after printing help; 0 on success.
 */
int cli_parse_common(int argc, char **argv, const char *cmd, bool allow_shell,
		     struct cli_common *out, int *optind_out);
void cli_common_clear(struct cli_common *c);

/* Print "corral: message" on stderr, or the JSON error object on stdout. Returns 125. */
struct option;
/*
 * getopt_long takes any unambiguous prefix of a long option ("--proc" for
 * "--procs"), so a model's near-miss flag would silently mean another
 * option. Scan |argv| as getopt_long will (from argv[1]; up to "--", and
 * with |stop_at_operand| up to the first operand; option values skipped,
 * |short_args| naming the short options that take one) for the first long
 * option that is not exactly one of |opts|: its index (0: none), with
 * "; did you mean --procs?" (or "") in |hint|.
 */
int cli_inexact_option(int argc, char **argv, const struct option *opts, const char *short_args,
		       bool stop_at_operand, char *hint, size_t len);

int cli_fail(bool json, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cli_fail_err(bool json, const struct corral_error *err);

/* Fill the policy's root with the absolute current directory when unset. */
int cli_default_root(struct corral_policy *p, struct corral_error *err);

/*
 * fds 0..2 must exist while corral runs commands: otherwise the first pipe
 * would take one of them and a command would find its output where its
 * input should be (the library refuses to run then). A closed one is held
 * open on /dev/null, close-on-exec, so a command still finds it closed;
 * |closed| says which were. Returns 0, or -errno when /dev/null cannot be
 * opened.
 */
int cli_hold_stdio(bool closed[3]);

/*
 * corral session and corral mcp: stdin read line by line until it ends, a
 * handler says stop, or SIGTERM, SIGINT or SIGHUP arrives (SIGPIPE is
 * ignored). Each non-blank line goes to |on_line| without its newline; a
 * last line without one counts; a line longer than |max| bytes goes once,
 * cut short (to be answered as too large), and the rest of it is dropped.
 * |on_line| returns non-zero to stop. Returns the signal that ended the
 * reading, or 0.
 */
int cli_serve_lines(size_t max, int (*on_line)(void *ud, const char *line, size_t len), void *ud);

/* One line and its newline on stdout, whole, under a lock (any thread); lost when stdout is gone. */
void cli_write_line(const char *line, size_t len);

/* What corral session and corral mcp say of themselves in their argument errors and help. */
struct cli_session_cmd {
	const char *name;     /* "session" */
	const char *help;     /* printed after run's options on --help */
	const char *operands; /* why no operand: "requests come on stdin, ..." */
	const char *output;   /* what stdout carries: "events" */
};

/*
 * The arguments of corral session and corral mcp: run's options and
 * --approve CMD (|*approve|), no operand, stdout open, the root defaulted
 * to the current directory. 0 with |c| filled (cli_common_clear it); -1
 * after help (exit 0); otherwise the exit code, the error printed.
 */
int cli_session_args(int argc, char **argv, const struct cli_session_cmd *cmd, struct cli_common *c,
		     const char **approve);

int cli_run(int argc, char **argv);
int cli_probe(int argc, char **argv);
int cli_policy(int argc, char **argv);
int cli_resolve(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_session(int argc, char **argv);
int cli_mcp(int argc, char **argv);

#endif
