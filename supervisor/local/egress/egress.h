/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Network "allow": the egress proxy (docs/threat-model.md, "Network
 * allow"). The supervisor listens on a random loopback address
 * (127.x.y.z, ephemeral port) and the command's environment names it in
 * HTTP(S)_PROXY / ALL_PROXY; seccomp user notification (supervisor/local/
 * unotify/) lets a TCP connect reach that address only, the supervisor's
 * helper making it on the supervisor's copy of the address. The proxy
 * answers CONNECT host:port and absolute-form plain HTTP, resolves the
 * name itself, and connects only where the "allow" list (policy/allow.h)
 * says, refusing loopback, private and link-local addresses a name
 * resolves to unless listed literally. Refusals are answered 403 and kept
 * for the run's denials.
 *
 * Threads: one accept thread, started at the first connection the
 * mediation lets through (a run that makes none pays for a socket, a bind
 * and a listen), and one thread per connection, which splices bytes both
 * ways. The state is reference-counted: corral_egress_free only asks the
 * threads to stop, the last one out frees it.
 */
#ifndef CORRAL_EGRESS_H
#define CORRAL_EGRESS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "internal/util.h"
#include "policy/policy.h"
#include "supervisor/exec/denials.h"

struct corral_denials;
struct corral_egress;

/*
 * Add "net.egress_allow" to |ps|: not applicable but under network
 * "allow"; there, enforced when the supervisor can mediate connects
 * (corral_unotify_handover), else dropped, and under compat best-effort
 * |p|'s network becomes "none" (the stricter neighbour, never "host").
 */
struct corral_posture;
void corral_egress_posture(struct corral_policy *p, struct corral_posture *ps);

/* Listen for |p|'s run (network "allow"). 0, or -errno with |err| set. */
int corral_egress_new(const struct corral_policy *p, struct corral_egress **out, struct corral_error *err);
/* Stop serving (connections being relayed are cut). Accepts NULL. */
void corral_egress_free(struct corral_egress *e);

/* "http://127.a.b.c:PORT", for the proxy variables. */
const char *corral_egress_url(const struct corral_egress *e);
/* The listener's address. */
const struct sockaddr_in *corral_egress_addr(const struct corral_egress *e);
/* Whether |sa| (|len| bytes, the caller's copy) is exactly the proxy's address. */
bool corral_egress_is_proxy(const struct corral_egress *e, const void *sa, size_t len);
/*
 * The mediation lets the socket |sock| (its copy) connect to the proxy:
 * bind it to the proxy's own 127.x.y.z (an ephemeral port) unless it is
 * bound already, and expect a connection from that address and port.
 * The proxy serves expected connections only: another process on the
 * host, which can connect to any loopback listener, is turned away.
 */
void corral_egress_admit(struct corral_egress *e, int sock, pid_t pid);
/* A connection to the proxy was let through: make sure it is served. */
void corral_egress_kick(struct corral_egress *e);
/*
 * A session's: from now on each refusal goes at once to |fn| (from a proxy
 * thread) with the owner of its connection: what |owner| answered for the
 * pid (the supervisor's PID namespace) of the task whose connect
 * corral_egress_admit let through, asked then, while that task waits in
 * its connect (a session: the call it belongs to). |fn| may take the
 * entries; they are cleared after it returns. |owner| and |fn| run under
 * the proxy's lock, so corral_egress_route(e, NULL, NULL, NULL) returns
 * only once no call of the old ones is under way: do that before |arg| goes.
 */
void corral_egress_route(struct corral_egress *e, unsigned long (*owner)(void *arg, pid_t pid),
			 void (*fn)(void *arg, unsigned long owner, struct corral_denials *d), void *arg);
/* Move the refusals recorded so far into |d| (kind "network", source "supervisor"). */
void corral_egress_drain(struct corral_egress *e, struct corral_denials *d);

#endif
