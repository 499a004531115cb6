/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The egress proxy of network "allow" (egress.h for the shape).
 *
 * Hazards, and what each step is for:
 *  - The request is the command's bytes: parsed by request.c (fuzzed),
 *    bounded (CORRAL_EGRESS_HEAD_MAX, a deadline for the head).
 *  - A host in another spelling ("2130706433", "0x7f.1", "::ffff:
 *    127.0.0.1", "[::1]") is an IP literal to every resolver:
 *    corral_allow_classify says so, and a literal is allowed only when
 *    listed literally.
 *  - Only names that match the list are resolved (nothing else reaches a
 *    resolver), and the connection goes to what was resolved, once: an
 *    address the name gives later plays no part. An address that is
 *    loopback, private or link-local is refused unless listed literally
 *    (DNS rebinding onto the host's own services).
 *  - Plain HTTP is forwarded with "Connection: close", one request per
 *    connection: a second request on a kept-alive connection cannot name
 *    another host.
 *  - What a listed host does with the connection (redirects, CONNECT to a
 *    TLS name other than the one asked) is its own: listing a host is a
 *    trust decision (docs/threat-model.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal/clock.h"
#include "policy/allow.h"
#include "supervisor/exec/denials.h"
#include "supervisor/local/egress/egress.h"
#include "supervisor/local/egress/request.h"
#include "supervisor/local/unotify/unotify.h"

#define CONN_MAX 256          /* connections relayed at once; more wait in the backlog */
#define CONN_FDS 6            /* a relayed connection's fds: its two sockets and two pipes */
#define REFUSED_MAX 64        /* refusals kept between two drains */
#define EXPECT_MAX 512        /* sources of connections let through, not yet accepted (oldest dropped) */
#define HEAD_TIMEOUT_MS 30000 /* for the request head */
#define CONNECT_TIMEOUT_MS 15000
#define PIPE_CHUNK (64 * 1024)

struct refusal {
	char what[300];
	char hint[400];
};

struct expected_src {
	struct sockaddr_in src;
	unsigned long owner; /* what the route's owner() said of the task whose connect was let through */
};

struct corral_egress {
	atomic_int refs;          /* the owner (until corral_egress_free) + each thread */
	int lfd;                  /* the listener */
	int stop;                 /* eventfd: readable once the owner is gone */
	struct sockaddr_in addr;
	char url[48];
	struct corral_allow_entry *allow;
	size_t n_allow;
	int network;
	int conn_max;             /* CONN_MAX, or fewer where the fd limit is low */
	pthread_mutex_t lock;     /* the fields below */
	bool started;
	int conns;
	struct refusal refused[REFUSED_MAX];
	size_t n_refused;
	struct expected_src expect[EXPECT_MAX]; /* a ring: corral_egress_admit adds, accept takes */
	size_t n_expect, next_expect;
	/* A session's: each refusal handed to |route| with its connection's owner (corral_egress_route). */
	unsigned long (*owner)(void *arg, pid_t pid);
	void (*route)(void *arg, unsigned long owner, struct corral_denials *d);
	void *route_arg;
};

void corral_egress_posture(struct corral_policy *p, struct corral_posture *ps)
{
	char why[200] = "";

	if (p->network != CORRAL_NET_ALLOW) {
		corral_posture_add(ps, CORRAL_P_NET_EGRESS_ALLOW, CORRAL_PROMISE_NA,
				   "network \"%s\": no allow list asked for", corral_network_name(p->network));
		return;
	}
	if (corral_unotify_handover(p, why, sizeof(why)) >= 0) {
		corral_posture_add(ps, CORRAL_P_NET_EGRESS_ALLOW, CORRAL_PROMISE_ENFORCED,
				   "%zu host(s) listed; inet connects reach only corral's egress proxy "
				   "(HTTP(S)_PROXY, ALL_PROXY), which resolves listed names itself and "
				   "connects only to them; raw IPs unless listed, UDP (DNS included), addressed "
				   "sends and listen() refused", p->allow.n);
		return;
	}
	corral_posture_add(ps, CORRAL_P_NET_EGRESS_ALLOW, CORRAL_PROMISE_DROPPED,
			   "network \"allow\" needs the supervisor to mediate connects (seccomp user "
			   "notification): %s%s", why,
			   p->compat == CORRAL_COMPAT_BEST_EFFORT ? "; falling back to network \"none\"" : "");
	if (p->compat == CORRAL_COMPAT_BEST_EFFORT)
		p->network = CORRAL_NET_NONE;
}

/*
 * How many connections the proxy relays at once: CONN_MAX, but never more
 * than a quarter of the supervisor's open-file limit (a soft limit of
 * 1024 is common), so a command holding tunnels open cannot starve the
 * rest of the supervisor (the Unix-socket mediation, the run's own
 * files) of descriptors.
 */
static int conn_budget(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return CONN_MAX;
	n = rl.rlim_cur / 4 / CONN_FDS;
	return n < 8 ? 8 : n > CONN_MAX ? CONN_MAX : (int)n;
}

static void unref(struct corral_egress *e)
{
	if (atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	safe_close(e->lfd);
	safe_close(e->stop);
	pthread_mutex_destroy(&e->lock);
	free(e->allow);
	free(e);
}

int corral_egress_new(const struct corral_policy *p, struct corral_egress **out, struct corral_error *err)
{
	struct corral_egress *e = calloc(1, sizeof(*e));
	socklen_t alen = sizeof(struct sockaddr_in);
	uint8_t rnd[3] = { 0, 0, 1 };
	int r;

	if (!e)
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	atomic_init(&e->refs, 1);
	e->lfd = e->stop = -1;
	pthread_mutex_init(&e->lock, NULL);
	e->network = p->network;
	e->conn_max = conn_budget();
	e->allow = calloc(p->allow.n ? p->allow.n : 1, sizeof(*e->allow));
	if (!e->allow) {
		unref(e);
		return corral_err(err, CORRAL_E_INTERNAL, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < p->allow.n; i++) {
		char why[200];

		if (corral_allow_parse(p->allow.v[i], &e->allow[e->n_allow], NULL, 0, why, sizeof(why)) == 0)
			e->n_allow++;
	}
	e->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (e->stop < 0 || e->lfd < 0) {
		r = errno;
		unref(e);
		return corral_err(err, CORRAL_E_SETUP, r, "network \"allow\": the egress proxy's socket: %s",
				  corral_strerror(r));
	}
	/* A random 127.x.y.z: nothing else on the host listens there, and it is guessed by no one. */
	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd) || (rnd[0] | rnd[1] | rnd[2]) == 0 ||
	    (rnd[0] == 255 && rnd[1] == 255 && rnd[2] == 255))
		rnd[0] = 0, rnd[1] = 0, rnd[2] = 1;
	e->addr.sin_family = AF_INET;
	e->addr.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)rnd[0] << 16 | (uint32_t)rnd[1] << 8 | rnd[2]);
	if (bind(e->lfd, (struct sockaddr *)&e->addr, sizeof(e->addr)) < 0) {
		/* A host whose lo carries only 127.0.0.1: that one. */
		e->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(e->lfd, (struct sockaddr *)&e->addr, sizeof(e->addr)) < 0) {
			r = errno;
			unref(e);
			return corral_err(err, CORRAL_E_SETUP, r,
					  "network \"allow\": binding the egress proxy to 127.0.0.1: %s",
					  corral_strerror(r));
		}
	}
	if (listen(e->lfd, 128) < 0 || getsockname(e->lfd, (struct sockaddr *)&e->addr, &alen) < 0) {
		r = errno;
		unref(e);
		return corral_err(err, CORRAL_E_SETUP, r, "network \"allow\": the egress proxy's listen: %s",
				  corral_strerror(r));
	}
	{
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &e->addr.sin_addr, ip, sizeof(ip));
		snprintf(e->url, sizeof(e->url), "http://%s:%u", ip, ntohs(e->addr.sin_port));
	}
	*out = e;
	return 0;
}

void corral_egress_free(struct corral_egress *e)
{
	uint64_t one = 1;

	if (!e)
		return;
	/* Wakes every thread's poll; each drops its reference on the way out. */
	if (write(e->stop, &one, sizeof(one)) < 0) {
		/* an eventfd's counter cannot overflow from one write */
	}
	unref(e);
}

const char *corral_egress_url(const struct corral_egress *e)
{
	return e->url;
}

const struct sockaddr_in *corral_egress_addr(const struct corral_egress *e)
{
	return &e->addr;
}

bool corral_egress_is_proxy(const struct corral_egress *e, const void *sa, size_t len)
{
	struct sockaddr_in a;

	if (!e || len < sizeof(a))
		return false;
	memcpy(&a, sa, sizeof(a));
	return a.sin_family == AF_INET && a.sin_port == e->addr.sin_port &&
	       a.sin_addr.s_addr == e->addr.sin_addr.s_addr;
}

void corral_egress_route(struct corral_egress *e, unsigned long (*owner)(void *arg, pid_t pid),
			 void (*fn)(void *arg, unsigned long owner, struct corral_denials *d), void *arg)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->owner = owner;
	e->route = fn;
	e->route_arg = arg;
	pthread_mutex_unlock(&e->lock);
}

void corral_egress_drain(struct corral_egress *e, struct corral_denials *d)
{
	if (!e || !d)
		return;
	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < e->n_refused; i++)
		corral_denials_add(d, "network", e->refused[i].what, "supervisor", e->refused[i].hint);
	e->n_refused = 0;
	pthread_mutex_unlock(&e->lock);
}

/*
 * Keep one refusal for the next drain (the same target counts once per
 * entry there), or hand it at once to the route, with the pid of the task
 * whose connection it was.
 */
static void refuse(struct corral_egress *e, unsigned long owner, const char *what, const char *hint)
{
	pthread_mutex_lock(&e->lock);
	if (e->route) {
		/* Under the lock: corral_egress_route(e, NULL, NULL) waits for it. */
		struct corral_denials d = {};

		corral_denials_add(&d, "network", what, "supervisor", hint);
		e->route(e->route_arg, owner, &d);
		corral_denials_clear(&d);
		pthread_mutex_unlock(&e->lock);
		return;
	}
	if (e->n_refused < REFUSED_MAX) {
		struct refusal *f = &e->refused[e->n_refused++];

		snprintf(f->what, sizeof(f->what), "%s", what);
		snprintf(f->hint, sizeof(f->hint), "%s", hint);
	}
	pthread_mutex_unlock(&e->lock);
}

/* ----------------------------------------------------------- a connection */

struct conn {
	struct corral_egress *e;
	int cfd;
	unsigned long owner; /* whose connection (corral_egress_admit) */
};

static long long now_ms(void)
{
	return (long long)corral_now_ms();
}

/* Wait for |events| on |fd| or the stop eventfd, up to |deadline|. 1 ready, 0 timeout/stop, -1 error. */
static int wait_fd(struct corral_egress *e, int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd pf[2] = { { .fd = fd, .events = events }, { .fd = e->stop, .events = POLLIN } };
		long long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(pf, 2, (int)(left > 60000 ? 60000 : left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (pf[1].revents)
			return 0;
		if (pf[0].revents)
			return 1;
	}
}

static int write_all(struct corral_egress *e, int fd, const char *buf, size_t len)
{
	long long deadline = now_ms() + CONNECT_TIMEOUT_MS;

	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EAGAIN) {
			if (wait_fd(e, fd, POLLOUT, deadline) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Answer the command with |status| and a one-line body. */
static void reply(struct conn *c, const char *status, const char *body)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
			 status, strlen(body) + 1, body);

	if (n > 0)
		write_all(c->e, c->cfd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void host_port(char *out, size_t len, int family, const char *host, unsigned port)
{
	snprintf(out, len, family == 6 ? "[%s]:%u" : "%s:%u", host, port);
}

/*
 * A refusal: into the denials, and 403 to the command naming what to add:
 * |add| (the destination, or for a listed name that resolves to an
 * internal address, that address), or nothing when no entry would help.
 */
static void refuse_reply(struct conn *c, const char *what, const char *why, const char *add)
{
	char hint[400], body[600];

	if (add) {
		snprintf(hint, sizeof(hint),
			 "network \"allow\": %s %s; add --allow %s (policy key \"allow\") if the command needs it",
			 what, why, add);
		snprintf(body, sizeof(body), "corral: %s %s (network \"allow\"); add --allow %s to reach it", what,
			 why, add);
	} else {
		snprintf(hint, sizeof(hint), "network \"allow\": %s %s", what, why);
		snprintf(body, sizeof(body), "corral: %s %s (network \"allow\")", what, why);
	}
	refuse(c->e, c->owner, what, hint);
	reply(c, "403 Forbidden", body);
}

/* Connect to |sa| within the deadline. The socket, or -errno. */
static int dial(struct corral_egress *e, const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -errno;
	if (connect(fd, sa, len) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		int r = -errno;
		close(fd);
		return r;
	}
	if (wait_fd(e, fd, POLLOUT, now_ms() + CONNECT_TIMEOUT_MS) <= 0) {
		close(fd);
		return -ETIMEDOUT;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
		close(fd);
		return soerr ? -soerr : -EIO;
	}
	return fd;
}

/* Answer 502: the destination was allowed but could not be reached. */
static void unreachable(struct conn *c, const char *what, int e)
{
	char body[400];

	snprintf(body, sizeof(body), "corral: connecting to %s: %s", what, corral_strerror(e));
	reply(c, "502 Bad Gateway", body);
}

/* An IP literal (in whatever spelling): allowed only when listed literally. The socket, or -1 (answered). */
static int upstream_literal(struct conn *c, const struct corral_egress_req *rq, int family, const uint8_t *addr)
{
	struct corral_egress *e = c->e;
	struct sockaddr_storage ss = {};
	char what[300], canon[INET6_ADDRSTRLEN];
	socklen_t sl;
	int fd;

	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, canon, sizeof(canon));
	host_port(what, sizeof(what), family, canon, rq->port);
	if (corral_allow_match_ip(e->allow, e->n_allow, family, addr, rq->port) < 0) {
		refuse_reply(c, what, "is not in the allow list (an IP address must be listed as written)", what);
		return -1;
	}
	if (family == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)rq->port);
		memcpy(&s4->sin_addr, addr, 4);
		sl = sizeof(*s4);
		if (corral_egress_is_proxy(e, s4, sl)) {
			refuse_reply(c, what, "is corral's own proxy", NULL);
			return -1;
		}
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)rq->port);
		memcpy(&s6->sin6_addr, addr, 16);
		sl = sizeof(*s6);
	}
	fd = dial(e, (struct sockaddr *)&ss, sl);
	if (fd < 0) {
		unreachable(c, what, -fd);
		return -1;
	}
	return fd;
}

/*
 * One address |ai| of a listed name, its port set: its family (4 or 6)
 * and bytes in |*a|, or 0 to skip it (another family, or the proxy itself).
 */
static int resolved_addr(struct corral_egress *e, struct addrinfo *ai, unsigned port, const uint8_t **a)
{
	if (ai->ai_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ai->ai_addr;

		s4->sin_port = htons((uint16_t)port);
		*a = (const uint8_t *)&s4->sin_addr;
		return corral_egress_is_proxy(e, s4, sizeof(*s4)) ? 0 : 4;
	}
	if (ai->ai_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ai->ai_addr;

		s6->sin6_port = htons((uint16_t)port);
		*a = (const uint8_t *)&s6->sin6_addr;
		return 6;
	}
	return 0;
}

/*
 * A name: only a listed one reaches the resolver, and the connection goes
 * to what it resolved to, once. The socket, or -1 (answered).
 */
static int upstream_name(struct conn *c, const struct corral_egress_req *rq, const char *name)
{
	struct corral_egress *e = c->e;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
	char what[300], hint[300] = "", internal[INET6_ADDRSTRLEN + 8] = "";
	int fd = -1, last = ECONNREFUSED;

	host_port(what, sizeof(what), 0, name, rq->port);
	if (corral_allow_match_name(e->allow, e->n_allow, name, rq->port) < 0) {
		refuse_reply(c, what, "is not in the allow list", what);
		return -1;
	}
	if (getaddrinfo(name, NULL, &hints, &res) != 0 || !res) {
		char body[400];

		snprintf(body, sizeof(body), "corral: %s: the name does not resolve on the host", name);
		reply(c, "502 Bad Gateway", body);
		return -1;
	}
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		const uint8_t *a = NULL;
		int fam = resolved_addr(e, ai, rq->port, &a);

		if (!fam)
			continue;
		/* DNS rebinding: a listed name pointing at the host's own or a private network. */
		if (corral_allow_internal(fam, a) && corral_allow_match_ip(e->allow, e->n_allow, fam, a, rq->port) < 0) {
			char ip[INET6_ADDRSTRLEN];

			inet_ntop(fam == 4 ? AF_INET : AF_INET6, a, ip, sizeof(ip));
			snprintf(hint, sizeof(hint), "resolves to %s, a loopback, private or link-local address, "
				 "which must itself be listed", ip);
			host_port(internal, sizeof(internal), fam, ip, rq->port);
			last = EACCES;
			continue;
		}
		fd = dial(e, ai->ai_addr, ai->ai_addrlen);
		if (fd < 0) {
			last = -fd;
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd >= 0)
		return fd;
	if (last == EACCES)
		refuse_reply(c, what, hint, internal); /* the name is listed already: its address is what is missing */
	else
		unreachable(c, what, last);
	return -1;
}

/* Decide and connect: the upstream socket, or -1 after answering the command (403 refused, 502 unreachable). */
static int open_upstream(struct conn *c, const struct corral_egress_req *rq)
{
	char name[CORRAL_ALLOW_HOST_MAX + 1];
	uint8_t addr[16];
	int family;

	if (corral_allow_classify(rq->host, &family, addr, name) < 0) {
		refuse_reply(c, rq->host[0] ? rq->host : "?", "is not a host name or IP address", NULL);
		return -1;
	}
	return family ? upstream_literal(c, rq, family, addr) : upstream_name(c, rq, name);
}

/*
 * Send the plain HTTP request on, in origin form, hop-by-hop headers
 * replaced by "Connection: close", and the Host header replaced by the
 * host the request named (and the list allowed): a listed server that
 * hosts other names (a CDN) is not asked for one of them.
 */
static int forward_head(struct conn *c, int ufd, const char *buf, const struct corral_egress_req *rq)
{
	char *out = malloc(CORRAL_EGRESS_HEAD_MAX + 640);
	size_t n = 0, i = rq->headers_off;
	int r;

	if (!out)
		return -ENOMEM;
	n += (size_t)snprintf(out, 64, "%s ", rq->method);
	if (rq->path_len && buf[rq->path_off] == '/') {
		memcpy(out + n, buf + rq->path_off, rq->path_len);
		n += rq->path_len;
	} else {
		out[n++] = '/';
		if (rq->path_len) {
			memcpy(out + n, buf + rq->path_off, rq->path_len);
			n += rq->path_len;
		}
	}
	n += (size_t)snprintf(out + n, 32, " %s\r\n", rq->version);
	while (i < rq->head_len) {
		const char *nl = memchr(buf + i, '\n', rq->head_len - i);
		size_t len = (size_t)(nl - (buf + i)), l = len;

		if (l && buf[i + l - 1] == '\r')
			l--;
		if (l == 0)
			break;
		if (!corral_egress_hop_header(buf + i, l) && !(l >= 5 && strncasecmp(buf + i, "host:", 5) == 0) &&
		    n + l + 2 < CORRAL_EGRESS_HEAD_MAX + 200) {
			memcpy(out + n, buf + i, l);
			n += l;
			out[n++] = '\r';
			out[n++] = '\n';
		}
		i += len + 1;
	}
	n += (size_t)snprintf(out + n, 300, strchr(rq->host, ':') ? "Host: [%s]" : "Host: %s", rq->host);
	if (rq->port != 80)
		n += (size_t)snprintf(out + n, 16, ":%u", rq->port);
	memcpy(out + n, "\r\nConnection: close\r\n\r\n", 23);
	n += 23;
	r = write_all(c->e, ufd, out, n);
	free(out);
	return r;
}

struct dir {
	int src, dst, pipe[2];
	size_t pending;
	bool eof, done;
};

/* Move bytes both ways until both directions ended, or an error, or the stop. */
static void relay(struct corral_egress *e, int a, int b)
{
	struct dir d[2] = { { .src = a, .dst = b, .pipe = { -1, -1 } }, { .src = b, .dst = a, .pipe = { -1, -1 } } };

	if (pipe2(d[0].pipe, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(d[1].pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		goto out;
	while (!(d[0].done && d[1].done)) {
		struct pollfd pf[5];
		int n = 0, idx[2][2] = { { -1, -1 }, { -1, -1 } };

		for (int k = 0; k < 2; k++) {
			if (!d[k].eof && d[k].pending < PIPE_CHUNK) {
				idx[k][0] = n;
				pf[n++] = (struct pollfd){ .fd = d[k].src, .events = POLLIN };
			}
			if (d[k].pending) {
				idx[k][1] = n;
				pf[n++] = (struct pollfd){ .fd = d[k].dst, .events = POLLOUT };
			}
		}
		pf[n++] = (struct pollfd){ .fd = e->stop, .events = POLLIN };
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[n - 1].revents)
			break;
		for (int k = 0; k < 2; k++) {
			struct dir *x = &d[k];

			if (idx[k][0] >= 0 && pf[idx[k][0]].revents) {
				ssize_t m = splice(x->src, NULL, x->pipe[1], NULL, PIPE_CHUNK,
						   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

				if (m > 0)
					x->pending += (size_t)m;
				else if (m == 0 || (errno != EAGAIN && errno != EINTR))
					x->eof = true; /* EOF, or a reset: no more from this side */
			}
			if (x->pending && (idx[k][1] < 0 || pf[idx[k][1]].revents || x->eof)) {
				ssize_t m = splice(x->pipe[0], NULL, x->dst, NULL, x->pending,
						   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

				if (m > 0)
					x->pending -= (size_t)m;
				else if (m < 0 && errno != EAGAIN && errno != EINTR)
					goto out; /* the other side is gone */
			}
			if (x->eof && !x->pending && !x->done) {
				shutdown(x->dst, SHUT_WR);
				x->done = true;
			}
		}
	}
out:
	for (int k = 0; k < 2; k++) {
		safe_close(d[k].pipe[0]);
		safe_close(d[k].pipe[1]);
	}
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct corral_egress *e = c->e;
	char *buf = malloc(CORRAL_EGRESS_HEAD_MAX);
	struct corral_egress_req rq;
	long long deadline = now_ms() + HEAD_TIMEOUT_MS;
	size_t len = 0;
	int ufd = -1, r = -EAGAIN;

	if (!buf)
		goto out;
	while (r == -EAGAIN) {
		ssize_t n;

		if (wait_fd(e, c->cfd, POLLIN, deadline) <= 0)
			goto out;
		n = recv(c->cfd, buf + len, CORRAL_EGRESS_HEAD_MAX - len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			goto out;
		len += (size_t)n;
		r = corral_egress_parse(buf, len, &rq);
	}
	if (r == -EPROTONOSUPPORT) {
		reply(c, "400 Bad Request", "corral: the proxy takes CONNECT host:port and http:// requests only");
		goto out;
	}
	if (r < 0) {
		reply(c, "400 Bad Request", "corral: not an HTTP proxy request");
		goto out;
	}
	ufd = open_upstream(c, &rq);
	if (ufd < 0)
		goto out;
	if (rq.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		if (write_all(e, c->cfd, ok, sizeof(ok) - 1) < 0)
			goto out;
	} else if (forward_head(c, ufd, buf, &rq) < 0) {
		goto out;
	}
	/* What the command sent after the head goes on first. */
	if (len > rq.head_len && write_all(e, ufd, buf + rq.head_len, len - rq.head_len) < 0)
		goto out;
	free(buf);
	buf = NULL;
	relay(e, c->cfd, ufd);
out:
	free(buf);
	safe_close(ufd);
	safe_close(c->cfd);
	pthread_mutex_lock(&e->lock);
	e->conns--;
	pthread_mutex_unlock(&e->lock);
	free(c);
	unref(e);
	return NULL;
}

/* Threads of the proxy take no signal: the supervisor's own thread handles them. */
static int spawn(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -r;
}

void corral_egress_admit(struct corral_egress *e, int sock, pid_t pid)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr = e ? e->addr.sin_addr : (struct in_addr){ 0 } };
	socklen_t sl = sizeof(src);

	if (!e)
		return;
	/* Already bound (EINVAL): its own address is the source. */
	(void)bind(sock, (struct sockaddr *)&src, sizeof(src));
	if (getsockname(sock, (struct sockaddr *)&src, &sl) < 0 || src.sin_family != AF_INET || !src.sin_port)
		return; /* no source to expect: the connection will be turned away */
	pthread_mutex_lock(&e->lock);
	/* The owner now, while the task waits in its connect: alive, its pid and process tree its own. */
	e->expect[e->next_expect] = (struct expected_src){ src, e->owner ? e->owner(e->route_arg, pid) : 0 };
	e->next_expect = (e->next_expect + 1) % EXPECT_MAX;
	if (e->n_expect < EXPECT_MAX)
		e->n_expect++;
	pthread_mutex_unlock(&e->lock);
}

/* Whether |peer| is a source corral_egress_admit expects (then taken off the list, its owner in |owner|). */
static bool expected(struct corral_egress *e, const struct sockaddr_in *peer, unsigned long *owner)
{
	bool found = false;

	pthread_mutex_lock(&e->lock);
	for (size_t k = 0; k < e->n_expect && !found; k++) {
		size_t i = (e->next_expect + EXPECT_MAX - 1 - k) % EXPECT_MAX;
		struct expected_src *xs = &e->expect[i];
		struct sockaddr_in *x = &xs->src;

		if (x->sin_port != peer->sin_port ||
		    (x->sin_addr.s_addr != htonl(INADDR_ANY) && x->sin_addr.s_addr != peer->sin_addr.s_addr))
			continue;
		found = true;
		*owner = xs->owner;
		/* Take it out: the newest entry moves into its place. */
		*xs = e->expect[(e->next_expect + EXPECT_MAX - 1) % EXPECT_MAX];
		e->next_expect = (e->next_expect + EXPECT_MAX - 1) % EXPECT_MAX;
		e->n_expect--;
	}
	pthread_mutex_unlock(&e->lock);
	return found;
}

static void *accept_main(void *arg)
{
	struct corral_egress *e = arg;

	for (;;) {
		struct pollfd pf[2] = { { .fd = e->lfd, .events = POLLIN }, { .fd = e->stop, .events = POLLIN } };
		struct sockaddr_in peer;
		socklen_t peer_len;
		unsigned long owner = 0;
		struct conn *c;
		int fd;
		bool full;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		pthread_mutex_lock(&e->lock);
		full = e->conns >= e->conn_max;
		pthread_mutex_unlock(&e->lock);
		if (full) {
			/* Wait for one to end; the rest wait in the backlog. */
			struct pollfd st = { .fd = e->stop, .events = POLLIN };

			if (poll(&st, 1, 50) > 0)
				break;
			continue;
		}
		peer_len = sizeof(peer);
		fd = accept4(e->lfd, (struct sockaddr *)&peer, &peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
			/* EMFILE, ENFILE, ENOBUFS: the connection stays queued; retrying at once would spin. */
			struct pollfd st = { .fd = e->stop, .events = POLLIN };

			if (poll(&st, 1, 50) > 0)
				break;
			continue;
		}
		if (fd < 0)
			continue;
		if (peer.sin_family != AF_INET || !expected(e, &peer, &owner)) {
			close(fd); /* not the sandbox's: another process on the host */
			continue;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		*c = (struct conn){ e, fd, owner };
		atomic_fetch_add(&e->refs, 1);
		pthread_mutex_lock(&e->lock);
		e->conns++;
		pthread_mutex_unlock(&e->lock);
		if (spawn(conn_main, c) < 0) {
			pthread_mutex_lock(&e->lock);
			e->conns--;
			pthread_mutex_unlock(&e->lock);
			close(fd);
			free(c);
			atomic_fetch_sub(&e->refs, 1); /* the owner still holds one */
		}
	}
	unref(e);
	return NULL;
}

void corral_egress_kick(struct corral_egress *e)
{
	bool start;

	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	start = !e->started;
	e->started = true;
	pthread_mutex_unlock(&e->lock);
	if (!start)
		return;
	atomic_fetch_add(&e->refs, 1);
	if (spawn(accept_main, e) < 0) {
		atomic_fetch_sub(&e->refs, 1);
		pthread_mutex_lock(&e->lock);
		e->started = false;
		pthread_mutex_unlock(&e->lock);
	}
}
