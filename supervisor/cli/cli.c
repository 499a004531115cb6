/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral: entry point, subcommand dispatch and the options every subcommand shares. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/cli/cli.h"

static const char usage_main[] =
	"Usage: corral COMMAND [OPTIONS]\n"
	"\n"
	"Run untrusted commands confined to one directory.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] [--] COMMAND [ARG...]   run a command in the sandbox\n"
	"  run [OPTIONS] -c 'SHELL STRING'       run the policy's shell (bash where present) -c STRING\n"
	"  probe [--json] [--policy FILE] [OPTIONS]\n"
	"                                        what this kernel can enforce; posture of a policy\n"
	"  policy check FILE                     validate a policy file\n"
	"  policy show [--policy FILE] [OPTIONS] the complete canonical policy as JSON\n"
	"  resolve --root DIR [--json] PATH      the host path of PATH under DIR, or an error\n"
	"  check [--json] [--policy FILE] [OPTIONS]\n"
	"                                        prove on this host that the policy's promises hold\n"
	"  session [OPTIONS] [--audit FILE]      one warm sandbox: JSON requests on stdin, events on stdout\n"
	"  mcp [OPTIONS] [--audit FILE]          the session's tools as an MCP server on stdio (JSON-RPC)\n"
	"\n"
	"  corral --version | corral COMMAND --help\n";

static const char usage_options[] =
	"Options (each overrides the policy file):\n"
	"  --policy FILE          JSON policy (default: built-in defaults)\n"
	"  --root DIR             confinement root, read-write (default: current directory)\n"
	"  --ro PATH              extra read-only (read+execute) path, repeatable\n"
	"  --rw PATH              extra read-write path, repeatable\n"
	"  --net none|loopback|host|allow\n"
	"                         network (default: none); allow: only the --allow hosts\n"
	"  --allow HOST[:PORT]    a destination for --net allow: NAME, *.SUFFIX or an IP\n"
	"                         (ports 80 and 443 when none is given), repeatable\n"
	"  --timeout SECONDS      wall-clock deadline, decimals allowed (default: 30)\n"
	"  --memory SIZE          memory: a memory cgroup over the tree where one can be\n"
	"                         made, else RLIMIT_AS; K/M/G suffixes (default: 1G)\n"
	"  --cpu SECONDS          CPU-time limit (default: 60)\n"
	"  --procs N              processes; 0: no limit of corral's own (default: 256)\n"
	"  --file-size SIZE       largest file the command may write (default: 1G)\n"
	"  --open-files N         open files (default: 1024)\n"
	"  --max-output SIZE      per-stream capture cap with --json: head and tail kept\n"
	"                         (default: 1M)\n"
	"  --preset minimal|standard  a named set of timeout and limits (docs/policy.md),\n"
	"                         under the explicit limit flags wherever it stands\n"
	"  --env NAME[=VALUE]     pass one host variable / set one; others are scrubbed\n"
	"  --cwd DIR              working directory, relative to the root (default: the root)\n"
	"  --audit FILE           append one JSON line per run to FILE\n"
	"  --user USER[:GROUP]    identity when corral runs as root\n"
	"  --proc host|private    the host's PID namespace and /proc, or the command's\n"
	"                         own (host processes hidden; default: host)\n"
	"  --provider local|docker|auto  provider (default: local; auto: docker where usable)\n"
	"  --image IMAGE          docker image\n"
	"  --compat strict|best-effort  refuse, or warn and run, when the kernel\n"
	"                         cannot enforce part of the policy (default: strict)\n"
	"  --json                 machine-readable output\n"
	"  --stdin pass|null      run: the caller's stdin, or /dev/null (default: null\n"
	"                         with --json, else pass)\n";

int cli_fail(bool json, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (json) {
		char *s = corral_error_json(code, msg);

		if (s)
			printf("%s\n", s);
		else
			printf("{\"error\": {\"code\": \"internal\", \"message\": \"out of memory\"}}\n");
		free(s);
		fflush(stdout);
	} else {
		fprintf(stderr, "corral: %s\n", msg);
	}
	return CLI_EXIT_ERROR;
}

int cli_fail_err(bool json, const struct corral_error *err)
{
	return cli_fail(json, err->code ? err->code : CORRAL_E_INTERNAL, "%s",
			err->message[0] ? err->message : "unknown error");
}

int cli_default_root(struct corral_policy *p, struct corral_error *err)
{
	char *cwd;
	int r;

	if (corral_policy_root(p))
		return 0;
	cwd = getcwd(NULL, 0);
	if (!cwd) {
		err->code = CORRAL_E_SETUP;
		err->sys_errno = errno;
		snprintf(err->message, sizeof(err->message), "current directory: %s", corral_strerror(errno));
		return -errno;
	}
	r = corral_policy_set(p, "root", cwd, err);
	free(cwd);
	if (r < 0) {
		/* The user gave no --root: say it is the current directory. */
		char why[sizeof(err->message)];
		const char *colon = strstr(err->message, ": ");

		snprintf(why, sizeof(why), "%s", colon ? colon + 2 : err->message);
		snprintf(err->message, sizeof(err->message), "root (the current directory): %.400s", why);
	}
	return r;
}

void cli_common_clear(struct cli_common *c)
{
	corral_policy_free(c->policy);
	c->policy = NULL;
}

enum {
	OPT_POLICY = 0x100,
	OPT_JSON,
	OPT_HELP,
	OPT_STDIN,
	/*
	 * Every option of the run table, each its own value (OPT_OVERLAY + k):
	 * the index getopt_long returns names the overlay key. Abbreviations
	 * never reach getopt_long (cli_inexact_option refuses them first).
	 */
	OPT_OVERLAY,
	OPT_OVERLAY_END = OPT_OVERLAY + 64,
};

static const struct option common_longopts[] = {
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "stdin", required_argument, NULL, OPT_STDIN },
	{ "root", required_argument, NULL, OPT_OVERLAY + 0 },
	{ "ro", required_argument, NULL, OPT_OVERLAY + 1 },
	{ "rw", required_argument, NULL, OPT_OVERLAY + 2 },
	{ "net", required_argument, NULL, OPT_OVERLAY + 3 },
	{ "timeout", required_argument, NULL, OPT_OVERLAY + 4 },
	{ "memory", required_argument, NULL, OPT_OVERLAY + 5 },
	{ "cpu", required_argument, NULL, OPT_OVERLAY + 6 },
	{ "procs", required_argument, NULL, OPT_OVERLAY + 7 },
	{ "file-size", required_argument, NULL, OPT_OVERLAY + 8 },
	{ "open-files", required_argument, NULL, OPT_OVERLAY + 9 },
	{ "max-output", required_argument, NULL, OPT_OVERLAY + 10 },
	{ "env", required_argument, NULL, OPT_OVERLAY + 11 },
	{ "user", required_argument, NULL, OPT_OVERLAY + 12 },
	{ "provider", required_argument, NULL, OPT_OVERLAY + 13 },
	{ "image", required_argument, NULL, OPT_OVERLAY + 14 },
	{ "compat", required_argument, NULL, OPT_OVERLAY + 15 },
	{ "cwd", required_argument, NULL, OPT_OVERLAY + 16 },
	{ "preset", required_argument, NULL, OPT_OVERLAY + 17 },
	{ "audit", required_argument, NULL, OPT_OVERLAY + 18 },
	{ "proc", required_argument, NULL, OPT_OVERLAY + 19 },
	{ "allow", required_argument, NULL, OPT_OVERLAY + 20 },
	{}
};

#define N_ELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* Levenshtein distance between |a| (|an| bytes) and |b|, for a suggestion. */
static size_t edit_distance(const char *a, size_t an, const char *b)
{
	size_t bn = strlen(b), row[64], prev, cur;

	if (an >= N_ELEMS(row) || bn >= N_ELEMS(row))
		return SIZE_MAX;
	for (size_t j = 0; j <= bn; j++)
		row[j] = j;
	for (size_t i = 1; i <= an; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= bn; j++) {
			size_t sub = prev + (a[i - 1] != b[j - 1]), best = sub;

			cur = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[bn];
}

/*
 * The real options closest to the long option |name| (|n| bytes, without
 * "--"), as "; did you mean --procs?" in |out| ("" when none is close):
 * the ones it is a prefix of, else those at the smallest edit distance of
 * at most 2 (a third of the name for long names).
 */
static void suggest_option(const char *name, size_t n, const struct option *opts, char *out, size_t len)
{
	const struct option *hits[8];
	size_t nhits = 0, best = SIZE_MAX, limit = n >= 9 ? n / 3 : 2, used;

	for (const struct option *o = opts; o->name; o++)
		if (n > 0 && strncmp(o->name, name, n) == 0 && nhits < N_ELEMS(hits))
			hits[nhits++] = o;
	if (!nhits) {
		for (const struct option *o = opts; o->name; o++) {
			size_t d = edit_distance(name, n, o->name);

			if (d > limit || d > best)
				continue;
			if (d < best)
				nhits = 0;
			best = d;
			if (nhits < N_ELEMS(hits))
				hits[nhits++] = o;
		}
	}
	out[0] = '\0';
	if (!nhits)
		return;
	used = (size_t)snprintf(out, len, "; did you mean");
	for (size_t i = 0; i < nhits && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s --%s", i == 0 ? "" : i + 1 == nhits ? " or" : ",",
					 hits[i]->name);
	if (used < len)
		snprintf(out + used, len - used, "?");
}

int cli_inexact_option(int argc, char **argv, const struct option *opts, const char *short_args,
		       bool stop_at_operand, char *hint, size_t len)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name;
		const struct option *hit = NULL;
		size_t n;

		if (strcmp(a, "--") == 0)
			return 0;
		if (a[0] != '-' || a[1] == '\0') {
			if (stop_at_operand)
				return 0; /* the command and its arguments are its own */
			continue;
		}
		if (a[1] != '-') {
			/* A short option taking a value: "-c STRING" (or "-cSTRING"). */
			if (a[2] == '\0' && strchr(short_args, a[1]))
				i++;
			continue;
		}
		name = a + 2;
		n = strcspn(name, "=");
		for (const struct option *o = opts; o->name; o++)
			if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
				hit = o;
		if (!hit) {
			suggest_option(name, n, opts, hint, len);
			return i;
		}
		if (hit->has_arg == required_argument && name[n] != '=')
			i++;
	}
	return 0;
}

/*
 * Does --json appear among the options, as getopt_long will parse them
 * (abbreviations included; not an option's value, nor anything from the
 * command on, which is the command's own)? It decides the format of the
 * errors found while parsing.
 */
static bool argv_wants_json(int argc, char **argv, const char *optstring)
{
	bool json = false;
	int c;

	opterr = 0;
	optind = 0; /* glibc: 0 also resets getopt's state */
	while ((c = getopt_long(argc, argv, optstring, common_longopts, NULL)) != -1)
		if (c == OPT_JSON)
			json = true;
	optind = 0;
	return json;
}

int cli_parse_common(int argc, char **argv, const char *cmd, bool allow_shell,
		     struct cli_common *out, int *optind_out)
{
	struct corral_error err = {};
	const char *policy_file = NULL;
	struct {
		const char *name;
		const char *value;
	} *overlays = NULL;
	size_t n_overlays = 0;
	/* '+': stop at the first operand, so the command's own options stay its own. */
	const char *optstring = allow_shell ? "+:c:" : "+:";
	bool json = argv_wants_json(argc, argv, optstring);
	char hint[200];
	int r, c, idx;

	memset(out, 0, sizeof(*out));
	out->json = json;

	overlays = calloc((size_t)argc + 1, sizeof(*overlays));
	if (!overlays)
		return cli_fail(json, CORRAL_E_INTERNAL, "out of memory");

	/* Long options match exactly: getopt_long's abbreviations ("--proc" for "--procs") are refused. */
	idx = cli_inexact_option(argc, argv, common_longopts, allow_shell ? "c" : "", true, hint, sizeof(hint));
	if (idx) {
		const char *bad = argv[idx];

		free(overlays);
		return cli_fail(json, CORRAL_E_USAGE, "%s: unknown option %.*s%s%s%s%s", cmd,
				(int)strcspn(bad, "="), bad, hint[0] ? hint : " (see corral ", hint[0] ? "" : cmd,
				hint[0] ? "" : " --help)", "");
	}

	opterr = 0;
	optind = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, optstring, common_longopts, &idx);
		if (c == -1)
			break;
		switch (c) {
		case OPT_POLICY:
			policy_file = optarg;
			break;
		case OPT_JSON:
			out->json = true;
			break;
		case OPT_STDIN:
			if (allow_shell && strcmp(optarg, "pass") == 0) {
				out->stdin_mode = CLI_STDIN_PASS;
			} else if (allow_shell && strcmp(optarg, "null") == 0) {
				out->stdin_mode = CLI_STDIN_NULL;
			} else {
				free(overlays);
				if (!allow_shell)
					return cli_fail(json, CORRAL_E_USAGE, "%s: --stdin is an option of run only", cmd);
				return cli_fail(json, CORRAL_E_USAGE,
						"--stdin: '%s' is neither pass (the caller's stdin) nor null (/dev/null)",
						optarg);
			}
			break;
		case OPT_HELP:
			printf("Usage: corral %s [OPTIONS]%s\n\n%s", cmd,
			       allow_shell ? " [--] COMMAND [ARG...] | -c 'SHELL STRING'" : "",
			       usage_options);
			if (allow_shell)
				printf("  -c STRING              run STRING with the policy's shell (default /bin/bash\n"
				       "                         where it exists, else /bin/sh)\n");
			free(overlays);
			return -1;
		case OPT_OVERLAY ... OPT_OVERLAY_END - 1:
			overlays[n_overlays].name = common_longopts[idx].name;
			overlays[n_overlays].value = optarg;
			n_overlays++;
			break;
		case 'c':
			out->shell = optarg;
			break;
		case ':':
			free(overlays);
			if (optopt == 'c')
				return cli_fail(json, CORRAL_E_USAGE, "%s: option -c needs an argument", cmd);
			return cli_fail(json, CORRAL_E_USAGE, "%s: option %s needs an argument", cmd,
					argv[optind - 1]);
		default:
			free(overlays);
			if (optopt && optopt < 0x100 && optopt != '?')
				return cli_fail(json, CORRAL_E_USAGE, "%s: unknown option -%c", cmd, optopt);
			return cli_fail(json, CORRAL_E_USAGE, "%s: unknown option %s", cmd,
					argv[optind - 1]);
		}
	}
	*optind_out = optind;

	if (policy_file) {
		r = corral_policy_load_file(policy_file, &out->policy, &err);
		out->have_policy_file = true;
	} else {
		r = corral_policy_new(&out->policy);
		if (r < 0) {
			err.code = CORRAL_E_INTERNAL;
			snprintf(err.message, sizeof(err.message), "%s", corral_strerror(-r));
		}
	}
	if (r < 0) {
		free(overlays);
		return cli_fail_err(json, &err);
	}
	/*
	 * --preset first, wherever it stands: a named set of limits under the
	 * explicit flags, so --memory 2G --preset minimal keeps 2G.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n_overlays; i++) {
			if ((strcmp(overlays[i].name, "preset") == 0) != (pass == 0))
				continue;
			r = corral_policy_set(out->policy, overlays[i].name, overlays[i].value, &err);
			if (r < 0) {
				free(overlays);
				cli_common_clear(out);
				return cli_fail_err(json, &err);
			}
		}
	}
	free(overlays);
	/*
	 * check runs in a scratch root of its own: the current directory is
	 * no concern of it. probe reports a refused root as "runnable": false.
	 */
	if (strcmp(cmd, "run") == 0 || (strcmp(cmd, "check") == 0 && corral_policy_root(out->policy))) {
		/*
		 * First, before the identity or anything else is decided, so
		 * this is the message the user sees; the library refuses the
		 * same later (landlock/, docker).
		 */
		r = corral_policy_check_paths(out->policy, &err);
		if (r < 0) {
			cli_common_clear(out);
			return cli_fail_err(json, &err);
		}
	}
	return 0;
}

static int cli_main(int argc, char **argv);

/*
 * What corral printed must have reached standard output: a result, policy
 * or report that was lost (a full disk, /dev/full, a reader gone while
 * SIGPIPE is ignored) is corral's error, 125 with its line on stderr, not
 * a silent 0. In plain `run` corral prints nothing there itself.
 */
int cli_hold_stdio(bool closed[3])
{
	for (int fd = 0; fd < 3; fd++) {
		closed[fd] = fcntl(fd, F_GETFD) < 0 && errno == EBADF;
		if (closed[fd] && open("/dev/null", (fd ? O_WRONLY : O_RDONLY) | O_CLOEXEC) < 0)
			return -errno;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/*
	 * Fully buffered, 64 KiB: what corral prints (a report, a policy, a
	 * JSON result) leaves in one write at the end with every C library
	 * (musl's own buffer is 1 KiB), so a reader that stops at the line it
	 * wanted (grep -q) does not turn the rest into a SIGPIPE. Nothing is
	 * printed while a command runs, so nothing waits in it.
	 */
	static char stdout_buf[64 * 1024];
	setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));

	int code = cli_main(argc, argv);
	/*
	 * A write that already failed inside cli_main left its errno: a C
	 * library whose stdio drops the buffered text on a failed write
	 * (musl) leaves nothing for the fflush below to retry and fail on.
	 */
	int early = ferror(stdout) ? errno : 0;

	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "corral: writing to standard output: %s\n",
			corral_strerror(errno ? errno : early ? early : EIO));
		return CLI_EXIT_ERROR;
	}
	return code;
}

static int cli_main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		return cli_fail(false, CORRAL_E_USAGE,
				"missing command: run, probe, policy, resolve or check (see corral --help)");
	cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("corral %s\n", corral_version());
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage_main, stdout);
		return 0;
	}
	if (strcmp(cmd, "run") == 0) {
		/* Unprivileged runs bound processes relative to the uid's count: start the walk now. */
		if (geteuid() != 0)
			corral_nproc_prefetch(getuid());
		return cli_run(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "probe") == 0)
		return cli_probe(argc - 1, argv + 1);
	if (strcmp(cmd, "session") == 0)
		return cli_session(argc - 1, argv + 1);
	if (strcmp(cmd, "mcp") == 0)
		return cli_mcp(argc - 1, argv + 1);
	if (strcmp(cmd, "policy") == 0)
		return cli_policy(argc - 1, argv + 1);
	if (strcmp(cmd, "resolve") == 0)
		return cli_resolve(argc - 1, argv + 1);
	if (strcmp(cmd, "__canary") == 0)
		return corral_canary_main(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cli_check(argc - 1, argv + 1);
	/* --json before the word (corral --json bogus) or after it (corral bogus --json). */
	return cli_fail(argv_wants_json(argc, argv, "+:") || argv_wants_json(argc - 1, argv + 1, "+:"),
			CORRAL_E_USAGE,
			"unknown command '%s' (see corral --help)", cmd);
}
