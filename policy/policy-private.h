/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the policy loader, the flag overlay and the dumper.
 * Every validator takes |name|, the key path ("limits.memory") or the
 * option ("--memory") that every error message starts with.
 */
#ifndef CORRAL_POLICY_PRIVATE_H
#define CORRAL_POLICY_PRIVATE_H

#include "policy/policy.h"

struct corral_enum_name {
	const char *name;
	int value;
};

extern const struct corral_enum_name corral_provider_names[];
extern const struct corral_enum_name corral_network_names[];
extern const struct corral_enum_name corral_proc_names[];
extern const struct corral_enum_name corral_compat_names[];

const char *corral_enum_to_name(const struct corral_enum_name *t, int value);

int pv_enum(const char *name, const struct corral_enum_name *t, const char *s, int *out,
	    struct corral_error *err);
int pv_size(const char *name, const char *s, uint64_t *out, struct corral_error *err);
int pv_count(const char *name, const char *s, uint64_t *out, struct corral_error *err);
int pv_count_range(const char *name, long long v, uint64_t *out, struct corral_error *err);
/* limits.processes: a count, or 0 for no limit of corral's own (no RLIMIT_NPROC, pids.max "max"). */
int pv_processes(const char *name, const char *s, uint64_t *out, struct corral_error *err);
int pv_processes_range(const char *name, long long v, uint64_t *out, struct corral_error *err);
int pv_seconds(const char *name, const char *s, double max, double *out, struct corral_error *err);
int pv_seconds_range(const char *name, double v, double max, struct corral_error *err);
/* Absolute path, normalised lexically ("//" and "." dropped, no trailing '/'); *out is malloc'd. */
int pv_path(const char *name, const char *s, char **out, struct corral_error *err);
/* A working directory relative to the root: non-empty, shorter than PATH_MAX (the resolver judges the rest). */
int pv_cwd(const char *name, const char *s, struct corral_error *err);
int pv_user(const char *name, const char *s, struct corral_error *err);
int pv_image(const char *name, const char *s, struct corral_error *err);
int pv_approve(const char *name, const char *s, struct corral_error *err);
int pv_env_name(const char *name, const char *s, struct corral_error *err);


int env_set_put(struct corral_policy *p, const char *name, const char *value);
/*
 * Append the "allow" entry |s| (policy/allow.h) to |l| in its canonical
 * spelling (a repeat is dropped); CORRAL_E_POLICY naming |name| when it is
 * not a host.
 */
int corral_allow_add(struct corral_strv *l, const char *name, const char *s, struct corral_error *err);
void env_set_remove(struct corral_policy *p, const char *name);
const char *env_set_get(const struct corral_policy *p, const char *name);

/* A printable rendering of untrusted text for messages (control bytes as '?'). */
const char *corral_printable(const char *s, char *buf, size_t len);

#endif
