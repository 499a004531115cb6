/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy model (internal view). policy/ is pure: parsing, defaults,
 * validation, canonical dump, flag overlay. No syscalls beyond reading the
 * policy file itself.
 */
#ifndef CORRAL_POLICY_H
#define CORRAL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral.h"
#include "internal/strv.h"
#include "policy/path.h"


struct corral_kv {
	char *name;
	char *value;
};

struct corral_policy {
	int provider;       /* enum corral_provider */
	char *root;         /* NULL: current directory at run time */
	double timeout;     /* seconds, > 0 */
	int network;        /* enum corral_network */
	/* network "allow": egress destinations, canonical (policy/allow.h); key "allow", --allow */
	struct corral_strv allow;
	int proc;           /* enum corral_proc */
	bool proc_given;    /* proc came from a policy file or option: a session keeps it (else private where it can) */
	int compat;         /* enum corral_compat */
	char *user;         /* NULL: default identity (DESIGN.md) */
	/*
	 * What `-c STRING` runs as SHELL -c STRING: an absolute path, or NULL
	 * for the default, decided where the command runs (/bin/bash where it
	 * exists, else /bin/sh): the canonical form stays the same on every host.
	 */
	char *shell;
	/*
	 * The command's working directory relative to the root (or absolute
	 * under it), as given; NULL: the root. Resolved beneath the root at
	 * each run (supervisor/exec/sandbox.c).
	 */
	char *cwd;
	/* Append one JSON line per run to this file (absolute path), or NULL: no audit log. */
	char *audit;
	/*
	 * Sessions: a host command (sh -c, outside the sandbox) asked before
	 * each call, the request's JSON on its stdin, exit 0 approves; or NULL.
	 * Runs ignore it.
	 */
	char *approve;
	struct {
		struct corral_strv read_only;
		struct corral_strv read_write;
		bool private_tmp;
	} fs;
	struct {
		uint64_t memory;     /* bytes (RLIMIT_AS) */
		uint64_t cpu;        /* seconds (RLIMIT_CPU) */
		uint64_t processes;  /* RLIMIT_NPROC / pids.max */
		uint64_t file_size;  /* bytes (RLIMIT_FSIZE) */
		uint64_t open_files; /* RLIMIT_NOFILE */
		uint64_t output;     /* bytes, per captured stream */
	} limits;
	struct {
		struct corral_strv pass;
		struct corral_kv *set;
		size_t n_set;
	} env;
	struct {
		char *image;
		uint64_t memory; /* bytes */
		double cpus;
		uint64_t pids;
		bool pull;       /* may corral pull a missing image? default false */
	} docker;
};

/* The built-in read-only system paths; entries missing on a host are skipped. */
extern const char *const corral_default_read_only[];
bool corral_is_default_read_only(const char *path);

/*
 * Refuse (CORRAL_E_POLICY) a root or read-write path whose canonical form
 * |canon| is "/" or contains a system directory (/etc, /usr, /home, /root,
 * /var, /proc, /dev, ...): "|what| |path|:
 * refusing a root that contains system directories (/etc, ...)". |what| is
 * "root" or "fs.read_write".
 */
int corral_check_not_system(const char *what, const char *path, const char *canon,
			    const char *const *system_real, struct corral_error *err);

/*
 * The system directories corral_check_not_system refuses, NULL-terminated.
 * |system_real| there is index-parallel to it: each one's canonical form on
 * this host (NULL where absent, or the whole array NULL), which the host
 * side resolves (internal/hostpath.h, corral_system_real).
 */
extern const char *const corral_system_dirs[];

/*
 * corral_policy_set without the host: the same overlay, but "root", "ro"
 * and "rw" must already be absolute (a relative one is CORRAL_E_USAGE).
 * corral_policy_set (supervisor/local/hostpath.c) makes them absolute
 * against the current directory first.
 */
int corral_policy_overlay(struct corral_policy *p, const char *option, const char *value,
			  struct corral_error *err);

/*
 * --preset NAME: overwrite timeout and every limits.* key with a named set
 * (defaults.c; docs/policy.md lists the values): "minimal" for quick
 * inspection commands, "standard" the built-in defaults. |name| (the
 * option, "--preset") starts the message on an unknown set.
 */
int corral_preset_apply(struct corral_policy *p, const char *name, const char *value,
			struct corral_error *err);

/* The policy file's word for a network mode ("none", "loopback", ...), or NULL. */
const char *corral_network_name(int network);

/* Bounds the validator enforces (docs/policy.md). */
#define CORRAL_TIMEOUT_MAX (7.0 * 24 * 3600) /* seconds */
#define CORRAL_COUNT_MAX 2147483647ULL      /* counts and cpu seconds fit an int */
#define CORRAL_DOCKER_CPUS_MAX 1024.0
#define CORRAL_POLICY_FILE_MAX (1024 * 1024) /* bytes read from a policy file */

/*
 * Parse "1G", "512m", "1048576" (1024-based, case-insensitive K/M/G/T):
 * digits and at most one suffix letter, nothing else (no sign, space,
 * decimals). 0 is accepted here; callers check the range. Returns 0,
 * -EINVAL (malformed) or -ERANGE (beyond uint64).
 */
int corral_parse_size(const char *s, uint64_t *out);
/* Canonical size text: the largest exact suffix ("1G", "1536K", "7"). */
void corral_format_size(uint64_t v, char *buf, size_t len);
/*
 * Parse seconds with optional decimals ("30", "0.5", ".5"); digits and one
 * '.', independent of the locale. Returns 0, -EINVAL (malformed), or
 * -ERANGE (0, not finite, or above CORRAL_TIMEOUT_MAX).
 */
int corral_parse_duration(const char *s, double *out);
/*
 * The shortest decimal text that reads back as exactly |v| (finite):
 * integral values without a point ("30"), others like "0.5", "0.1",
 * "1e-05". Independent of the locale. Valid JSON number syntax.
 */
void corral_format_seconds(double v, char *buf, size_t len);
/* Locale-independent strtod (the C locale's '.'). */
double corral_strtod(const char *s, char **end);

/*
 * Load from a buffer of |len| bytes (need not be NUL-terminated); |source|
 * names it in syntax errors ("policy.json:3:5: ..."). The entry point of
 * both public loaders and of the fuzzer.
 */
int corral_policy_load_buffer(const char *buf, size_t len, const char *source,
			      struct corral_policy **out, struct corral_error *err);

#endif
