/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* corral resolve --root DIR [--json] [--must-exist] PATH */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/cli/cli.h"

#define EXIT_REFUSED 1

static const char usage[] =
	"Usage: corral resolve --root DIR [--json] [--must-exist] PATH\n"
	"\n"
	"Print the host path of PATH under DIR, proven by opening it beneath DIR with\n"
	"openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV).\n"
	"PATH is relative to DIR, or absolute and under DIR on a separator boundary.\n"
	"\n"
	"Refused (exit 1, 'corral: PATH: reason' on stderr): a path that escapes DIR,\n"
	"any symlink or magic link in any component, a mount crossing, a FIFO, device\n"
	"or socket, a missing directory on the way.\n"
	"\n"
	"PATH need not exist: a missing final component is accepted when its parent\n"
	"directory resolves beneath DIR (what a write-file tool needs); when it does\n"
	"exist it must pass the same checks. --must-exist refuses a missing one.\n"
	"The printed path is for display and for the next open; open it again\n"
	"beneath DIR (corral_resolve_open) rather than trusting it later.\n"
	"\n"
	"  --root DIR     the sandbox root (required)\n"
	"  --json         print {\"path\": ...} or {\"error\": {\"code\", \"message\"}} on stdout\n"
	"  --must-exist   refuse a PATH that does not exist\n"
	"\n"
	"Exit status: 0 resolved; 1 refused; 125 usage error or bad DIR.\n"
	"Needs openat2 (Linux >= 5.6); without it corral refuses to resolve (exit 125).\n";

enum { OPT_ROOT = 0x100, OPT_JSON, OPT_MUST_EXIST, OPT_HELP };

static const struct option longopts[] = {
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "must-exist", no_argument, NULL, OPT_MUST_EXIST },
	{ "help", no_argument, NULL, OPT_HELP },
	{}
};

/* A copy of |s| fit for a one-line message: control bytes and non-ASCII shown as '?'. */
static char *printable(const char *s)
{
	char *o = strdup(s);

	for (char *p = o; p && *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return o;
}

static int print_path(bool json, const char *host, const char *path)
{
	json_t *o;
	char *s;

	if (!json) {
		/*
		 * One line per answer: a newline in the path would make it two,
		 * and a shell's $(...) drops trailing ones ("..\n" would read as
		 * the root's parent). --json carries any path.
		 */
		if (strchr(host, '\n')) {
			char *shown = printable(path);
			int r = cli_fail(false, CORRAL_E_REFUSED,
					 "%s: the host path holds a newline, which plain output cannot show "
					 "unambiguously; use --json",
					 shown ? shown : "?");

			free(shown);
			return r == CLI_EXIT_ERROR ? EXIT_REFUSED : r;
		}
		printf("%s\n", host);
		return fflush(stdout) == 0 ? 0 : CLI_EXIT_ERROR;
	}
	/* jansson refuses invalid UTF-8: a path JSON cannot carry is refused, never mangled. */
	o = json_pack("{s:s}", "path", host);
	if (!o) {
		char *shown = printable(path);
		int r = cli_fail(true, CORRAL_E_REFUSED,
				 "%s: host path is not valid UTF-8 and cannot be carried in JSON",
				 shown ? shown : "?");

		free(shown);
		return r == CLI_EXIT_ERROR ? EXIT_REFUSED : r;
	}
	s = json_dumps(o, 0);
	json_decref(o);
	if (!s)
		return cli_fail(true, CORRAL_E_INTERNAL, "out of memory");
	printf("%s\n", s);
	free(s);
	return fflush(stdout) == 0 ? 0 : CLI_EXIT_ERROR;
}

int cli_resolve(int argc, char **argv)
{
	struct corral_error err = {};
	const char *root = NULL, *path;
	bool json = false, must_exist = false;
	char *host = NULL;
	struct stat st;
	int c, r;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			json = true;

	{
		char hint[200];
		int bad = cli_inexact_option(argc, argv, longopts, "", false, hint, sizeof(hint));

		if (bad)
			return cli_fail(json, CORRAL_E_USAGE,
					"resolve: unknown option %.*s%s", (int)strcspn(argv[bad], "="), argv[bad],
					hint[0] ? hint : " (see corral resolve --help)");
	}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT:
			root = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_MUST_EXIST:
			must_exist = true;
			break;
		case OPT_HELP:
			fputs(usage, stdout);
			return 0;
		case ':':
			return cli_fail(json, CORRAL_E_USAGE, "resolve: option %s needs an argument",
					argv[optind - 1]);
		default:
			if (optopt && optopt < 0x100 && optopt != '?')
				return cli_fail(json, CORRAL_E_USAGE, "resolve: unknown option -%c", optopt);
			return cli_fail(json, CORRAL_E_USAGE, "resolve: unknown option %s",
					argv[optind - 1]);
		}
	}
	if (!root)
		return cli_fail(json, CORRAL_E_USAGE, "resolve: missing --root DIR (see corral resolve --help)");
	if (optind >= argc)
		return cli_fail(json, CORRAL_E_USAGE, "resolve: missing PATH (see corral resolve --help)");
	if (argc - optind > 1)
		return cli_fail(json, CORRAL_E_USAGE, "resolve: exactly one PATH, got %d", argc - optind);
	path = argv[optind];

	if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		int e = stat(root, &st) < 0 ? errno : 0;
		char *shown = printable(root);

		r = cli_fail(json, e == ENOENT ? CORRAL_E_NOT_FOUND : CORRAL_E_USAGE,
			     "resolve: --root %s: %s", shown ? shown : "?",
			     e ? corral_strerror(e) : "not a directory");
		free(shown);
		return r;
	}

	r = corral_resolve_path(root, path, must_exist, &host, &err);
	if (r < 0) {
		/* Usage-type and unsupported failures are corral's, not a refusal of PATH. */
		if (err.code == CORRAL_E_USAGE || err.code == CORRAL_E_INTERNAL ||
		    err.code == CORRAL_E_UNSUPPORTED)
			return cli_fail_err(json, &err);
		cli_fail_err(json, &err);
		return EXIT_REFUSED;
	}
	r = print_path(json, host, path);
	free(host);
	return r;
}
