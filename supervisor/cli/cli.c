/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral: entry point, subcommand dispatch and the options every subcommand shares. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal/utf8.h"
#include "supervisor/cli/cli.h"
#include "supervisor/exec/sandbox.h"

static const char usage_main[] =
	"Usage: corral COMMAND [OPTIONS]\n"
	"\n"
	"Run untrusted commands confined to one directory.\n"
	"\n"
	"Commands:\n"
	"  run [OPTIONS] [--] COMMAND [ARG...]   run a command in the sandbox\n"
	"  run [OPTIONS] -c 'SHELL STRING'       run /bin/sh -c STRING in the sandbox\n"
	"  probe [--json] [--policy FILE] [OPTIONS]\n"
	"                                        what this kernel can enforce; posture of a policy\n"
	"  policy check FILE                     validate a policy file\n"
	"  policy show [--policy FILE] [OPTIONS] the complete canonical policy as JSON\n"
	"  resolve --root DIR [--json] PATH      the host path of PATH under DIR, or an error\n"
	"  check [--json] [--policy FILE] [OPTIONS]\n"
	"                                        prove on this host that the policy's promises hold\n"
	"\n"
	"  corral --version | corral COMMAND --help\n";

static const char usage_options[] =
	"Options (each overrides the policy file):\n"
	"  --policy FILE          JSON policy (default: built-in defaults)\n"
	"  --root DIR             confinement root, read-write (default: current directory)\n"
	"  --ro PATH              extra read-only (read+execute) path, repeatable\n"
	"  --rw PATH              extra read-write path, repeatable\n"
	"  --net none|loopback|host  network (default: none)\n"
	"  --timeout SECONDS      wall-clock deadline, decimals allowed (default: 30)\n"
	"  --memory SIZE          address-space limit, K/M/G suffixes (default: 1G)\n"
	"  --cpu SECONDS          CPU-time limit (default: 60)\n"
	"  --procs N              processes (default: 256)\n"
	"  --file-size SIZE       largest file the command may write (default: 1G)\n"
	"  --open-files N         open files (default: 1024)\n"
	"  --max-output SIZE      per-stream capture cap with --json (default: 1M)\n"
	"  --env NAME[=VALUE]     pass one host variable / set one; others are scrubbed\n"
	"  --user USER[:GROUP]    identity when corral runs as root\n"
	"  --proc host|private    the host's PID namespace and /proc, or the command's\n"
	"                         own (host processes hidden; default: host)\n"
	"  --provider local|docker  provider (default: local)\n"
	"  --image IMAGE          docker image\n"
	"  --compat strict|best-effort  refuse, or warn and run, when the kernel\n"
	"                         cannot enforce part of the policy (default: strict)\n"
	"  --json                 machine-readable output\n";

/*
 * |in| with what is not valid UTF-8 replaced by U+FFFD (one per maximal
 * subpart, as in results): JSON text must be UTF-8 (jansson refuses
 * anything else), and messages quote paths and arguments, which may hold
 * any bytes.
 */
static void utf8_repair(const char *in, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0, avail = strlen(in);

	while (avail) {
		size_t bad;
		int n = corral_utf8_seq(s, avail, &bad);
		const char *src = n > 0 ? (const char *)s : "\xEF\xBF\xBD";
		size_t len = n > 0 ? (size_t)n : 3, step = n > 0 ? (size_t)n : bad;

		if (o + len >= size)
			break;
		memcpy(out + o, src, len);
		o += len;
		s += step;
		avail -= step;
	}
	out[o] = '\0';
}

int cli_fail(bool json, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (json) {
		char text[3 * sizeof(msg)];
		json_t *o;

		utf8_repair(msg, text, sizeof(text));
		o = json_pack("{s:{s:s,s:s}}", "error", "code", corral_error_code_name(code),
			      "message", text);
		char *s = o ? json_dumps(o, 0) : NULL;
		if (s)
			printf("%s\n", s);
		else
			printf("{\"error\": {\"code\": \"internal\", \"message\": \"out of memory\"}}\n");
		free(s);
		json_decref(o);
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
	/*
	 * Every option of the run table, each its own value (OPT_OVERLAY + k)
	 * so that an ambiguous abbreviation (--r: --root, --ro, --rw) is an
	 * error with every C library: glibc's getopt_long otherwise takes the
	 * first of several options with the same value. The name is the
	 * overlay key.
	 */
	OPT_OVERLAY,
	OPT_OVERLAY_END = OPT_OVERLAY + 64,
};

static const struct option common_longopts[] = {
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
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
	{ "proc", required_argument, NULL, OPT_OVERLAY + 16 },
	{}
};

/*
 * "--r" (or "--r=X"): the long options it abbreviates when there are
 * several, as "--root, --ro, --rw" in |out|; false when it fits one or
 * none.
 */
static bool ambiguous_option(const char *arg, char *out, size_t len)
{
	size_t n, used = 0, count = 0;

	if (strncmp(arg, "--", 2) != 0)
		return false;
	arg += 2;
	n = strcspn(arg, "=");
	out[0] = '\0';
	for (const struct option *o = common_longopts; o->name; o++) {
		if (strncmp(o->name, arg, n) != 0)
			continue;
		if (o->name[n] == '\0')
			return false; /* an exact name is never ambiguous */
		count++;
		if (used < len) {
			int w = snprintf(out + used, len - used, "%s--%s", count > 1 ? ", " : "", o->name);

			used += w > 0 ? (size_t)w : 0;
		}
	}
	return count > 1;
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
	int r, c, idx;

	memset(out, 0, sizeof(*out));
	out->json = json;

	overlays = calloc((size_t)argc + 1, sizeof(*overlays));
	if (!overlays)
		return cli_fail(json, CORRAL_E_INTERNAL, "out of memory");

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
		case OPT_HELP:
			printf("Usage: corral %s [OPTIONS]%s\n\n%s", cmd,
			       allow_shell ? " [--] COMMAND [ARG...] | -c 'SHELL STRING'" : "",
			       usage_options);
			if (allow_shell)
				printf("  -c STRING              run /bin/sh -c STRING\n");
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
		default: {
			char fits[256];

			free(overlays);
			if (optopt && optopt < 0x100 && optopt != '?')
				return cli_fail(json, CORRAL_E_USAGE, "%s: unknown option -%c", cmd, optopt);
			if (ambiguous_option(argv[optind - 1], fits, sizeof(fits)))
				return cli_fail(json, CORRAL_E_USAGE, "%s: ambiguous option %s (%s)", cmd,
						argv[optind - 1], fits);
			return cli_fail(json, CORRAL_E_USAGE, "%s: unknown option %s", cmd,
					argv[optind - 1]);
		}
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
	for (size_t i = 0; i < n_overlays; i++) {
		r = corral_policy_set(out->policy, overlays[i].name, overlays[i].value, &err);
		if (r < 0) {
			free(overlays);
			cli_common_clear(out);
			return cli_fail_err(json, &err);
		}
	}
	free(overlays);
	/* check runs in a scratch root of its own: the current directory is no concern of it. */
	if (strcmp(cmd, "run") == 0 || strcmp(cmd, "probe") == 0 ||
	    (strcmp(cmd, "check") == 0 && corral_policy_root(out->policy))) {
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
