/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * corral run
 *
 * Two processes share the work, so that a corral killed by SIGKILL still
 * takes the whole command tree with it, with or without cgroups:
 *
 *  - T, the top process (the pid the caller sees, waits for and may kill),
 *    parses the options and builds the sandbox, then starts S and only
 *    waits for it, forwarding SIGTERM/SIGINT/SIGHUP/SIGQUIT. When S has
 *    exited, T prints the result and exits with the same code as a single
 *    process would (DESIGN.md).
 *  - S, the supervisor, runs corral_sandbox_exec: the engine makes it the
 *    child subreaper (pthread_once, on its first run: in S, never in T), so
 *    it is an ancestor of every process of the run. S dies with T's death
 *    signal turned into a cancel: when T is killed, even by SIGKILL, S kills
 *    the process group, sweeps every re-parented descendant (setsid, double
 *    fork) and reaps them, then exits.
 *
 * S is clone(CLONE_VM | SIGCHLD) on a stack of its own: no page tables are
 * copied (a fork would pay a copy-on-write fault for every page either
 * process then touches), and T, unlike a CLONE_VFORK parent, stays able to
 * take signals. The price is that S runs on T's memory *and* on T's glibc
 * thread state (no CLONE_SETTLS: errno, malloc's tcache, stdio lock
 * owners, pthread_once and cancellation words are the same TLS block).
 * So while S runs, T is parked: it makes only async-signal-safe calls that
 * write no errno and allocate nothing (see wait_supervisor and
 * forward_cancel), and touches no memory S uses. S never prints; T does
 * all the printing after S has exited. S leaves its result in |struct
 * supervisor| on T's stack, and a _exit()ing S holds no lock T could need.
 *
 * This is the CLI's arrangement only: a program using libcorral is its
 * own supervisor (docs/threat-model.md, "The supervisor").
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/cli.h"

/*
 * Code that runs while the other process runs on the same memory and TLS:
 * no sanitizer instrumentation, which keeps per-thread state (ASan's fake
 * stacks, its no-return stack bookkeeping) that T and S would share
 * without knowing it. Same reasoning as child.c's _child_.
 */
#define _shared_tls_ __attribute__((no_sanitize("address", "undefined")))

/*
 * S's stack: untouched pages cost nothing (MAP_NORESERVE, faulted in on
 * use), so it is as deep as a thread's, with a guard area below it that
 * no single frame can jump over. It is
 * never unmapped: S may have left sanitizer shadow state on it, and T
 * exits right after the run anyway.
 */
#define SUPERVISOR_STACK_SIZE (8UL << 20)
#define SUPERVISOR_GUARD_SIZE (256UL << 10) /* > the engine's largest frame (64 KB) */

/*
 * SIGTERM/SIGINT/SIGHUP/SIGQUIT cancel the run. In S, the handler writes
 * the signal number to a self-pipe the engine polls; the engine kills and
 * reaps the whole tree and returns. In T, the handler forwards the signal
 * to S. Either records it in |cancel_signo| (one variable: shared memory),
 * and T, once S has exited, dies of that signal.
 */
static int cancel_pipe[2] = { -1, -1 };
static volatile sig_atomic_t cancel_signo;
static volatile sig_atomic_t supervisor_pid;
static const int cancel_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
#define N_CANCEL_SIGNALS (sizeof(cancel_signals) / sizeof(cancel_signals[0]))

/* S's death signal when T dies: one S handles as a cancel. */
#define PARENT_DEATH_SIGNAL SIGTERM

/* Shared by T and S: written by T before clone, by S until it exits. */
struct supervisor {
	struct corral_sandbox *sb;
	const struct corral_exec_opts *opts;
	sigset_t mask; /* T's signal mask before clone; S restores it */
	pid_t parent;
	struct corral_result res;
	struct corral_error err;
	int r;
	bool done; /* S finished corral_sandbox_exec and stored r, res, err */
};

/* In S (installed by S itself): as before the split, on S's own errno. */
static _shared_tls_ void on_cancel(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t n __attribute__((unused));

	cancel_signo = sig;
	n = write(cancel_pipe[1], &b, 1);
	errno = saved;
}

/*
 * In T. errno is not saved and restored here: it is S's errno too, and a
 * restore would undo what S wrote meanwhile. Nothing here writes it:
 * kill() succeeds on S whether it runs or is a zombie (T reaps S only
 * after this handler can no longer run, reap_supervisor).
 */
static _shared_tls_ void forward_cancel(int sig)
{
	pid_t pid = supervisor_pid;

	cancel_signo = sig;
	if (pid > 0)
		kill(pid, sig);
}

static int install_cancel(void)
{
	if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static void set_cancel_handlers(void (*fn)(int), int flags)
{
	struct sigaction sa = { .sa_handler = fn, .sa_flags = flags };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_CANCEL_SIGNALS; i++)
		sigaction(cancel_signals[i], &sa, NULL);
}

/* |flush|: false when S died abnormally (stdio may be mid-update). */
static void die_of_cancel_signal(bool flush)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	int sig = cancel_signo;
	sigset_t set;

	if (!sig)
		return;
	if (flush)
		fflush(stdout);
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/*
 * S. Starts with every signal blocked (T blocked them around clone) and
 * T's handlers copied (no CLONE_SIGHAND): its own handlers first, then the
 * death signal, then the check that T did not die before it was set.
 */
static _shared_tls_ int supervisor_main(void *arg)
{
	struct supervisor *s = arg;

	set_cancel_handlers(on_cancel, 0);
	if (prctl(PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL, 0, 0, 0) < 0 || getppid() != s->parent)
		_exit(1); /* T is gone (or cannot be followed): start nothing */
	sigprocmask(SIG_SETMASK, &s->mask, NULL);
	s->r = corral_sandbox_exec(s->sb, s->opts, &s->res, &s->err);
	s->done = true;
	_exit(0);
}

/*
 * T, from clone until S has exited: async-signal-safe only, and nothing
 * that writes errno (it is S's errno). The cancel handlers carry
 * SA_RESTART, so waitid is restarted rather than failing with EINTR; it
 * cannot fail otherwise (S is our unreaped child). WNOWAIT keeps S a
 * zombie, so that forward_cancel never signals a recycled pid. Returns
 * -1 only if waitid failed anyway.
 */
static _shared_tls_ int wait_supervisor(pid_t pid, siginfo_t *si)
{
	for (;;) {
		si->si_pid = 0;
		if (waitid(P_PID, (id_t)pid, si, WEXITED | WNOWAIT | __WALL) == 0 && si->si_pid == pid)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/*
 * Reap S, after corral_sandbox_free joined the sandbox's helper thread:
 * this thread is then the only one a cancel signal can land on, so once
 * they are blocked here no forward_cancel can run with S's pid.
 */
static void reap_supervisor(void)
{
	pid_t pid = supervisor_pid;
	sigset_t set, old;

	if (pid <= 0)
		return;
	sigemptyset(&set);
	for (size_t i = 0; i < N_CANCEL_SIGNALS; i++)
		sigaddset(&set, cancel_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	supervisor_pid = 0;
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static size_t fmt_uint(char *p, unsigned v)
{
	char tmp[16];
	size_t n = 0, len;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(tmp));
	for (len = 0; n;)
		p[len++] = tmp[--n];
	return len;
}

/*
 * S ended without a result (killed by a signal, or failed): a setup error,
 * never a made-up success. Only write() and _exit(): S may have died in
 * the middle of malloc or stdio, on this process's own state.
 */
static _Noreturn void supervisor_lost(bool json, const siginfo_t *si)
{
	char buf[256];
	size_t n = 0;
	ssize_t w __attribute__((unused));

#define PUT(lit) (memcpy(buf + n, (lit), sizeof(lit) - 1), n += sizeof(lit) - 1)
	if (cancel_signo)
		die_of_cancel_signal(false);
	if (json)
		PUT("{\"error\": {\"code\": \"setup\", \"message\": \"");
	else
		PUT("corral: ");
	if (si && (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED)) {
		PUT("the supervisor process was killed by signal ");
		n += fmt_uint(buf + n, (unsigned)si->si_status);
	} else {
		PUT("the supervisor process exited without a result");
	}
	if (json)
		PUT("\"}}");
	PUT("\n");
#undef PUT
	w = write(json ? 1 : 2, buf, n);
	_exit(CLI_EXIT_ERROR);
}

/*
 * Run the command under S. Returns 0 with |s| filled in by S, or -errno
 * when S could not be started (nothing ran). Does not return when S
 * ended without a result.
 */
static int run_supervised(struct supervisor *s, bool json)
{
	sigset_t all;
	siginfo_t si;
	char *stack;
	pid_t pid;
	int e;

	stack = mmap(NULL, SUPERVISOR_STACK_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	if (mprotect(stack, SUPERVISOR_GUARD_SIZE, PROT_NONE) < 0) {
		e = errno;
		munmap(stack, SUPERVISOR_STACK_SIZE);
		return -e;
	}

	/*
	 * Every signal blocked around clone: no handler may run in S before S
	 * installed its own, and T's forwarders must not run before they know
	 * S's pid. T's pending signals are delivered (forwarded) right after.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &s->mask);
	set_cancel_handlers(forward_cancel, SA_RESTART);
	s->parent = getpid();
	pid = clone(supervisor_main, stack + SUPERVISOR_STACK_SIZE, CLONE_VM | SIGCHLD, s);
	if (pid < 0) {
		e = errno;
		set_cancel_handlers(forward_cancel, 0); /* records only: no S */
		pthread_sigmask(SIG_SETMASK, &s->mask, NULL);
		munmap(stack, SUPERVISOR_STACK_SIZE);
		return -e;
	}
	supervisor_pid = pid;
	pthread_sigmask(SIG_SETMASK, &s->mask, NULL);
	if (wait_supervisor(pid, &si) < 0)
		/* Cannot happen; if it does, T must not go on while S may run: dying makes S cancel. */
		supervisor_lost(json, NULL);
	/* S has exited: this process's state is T's alone again. */
	if (si.si_code != CLD_EXITED || si.si_status != 0 || !s->done)
		supervisor_lost(json, &si);
	return 0;
}

int cli_run(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	struct corral_sandbox *sb = NULL;
	struct supervisor sup = {};
	struct corral_result *res = &sup.res;
	const char *const *lines = NULL;
	int optind_, r, code;

	/*
	 * fds 0..2 must exist: otherwise the first pipe would take one of them
	 * and the command would find its output where its input should be.
	 */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			return CLI_EXIT_ERROR;

	r = cli_parse_common(argc, argv, "run", true, &c, &optind_);
	if (r == -1)
		return 0;
	if (r)
		return r;
	if (!c.shell && optind_ >= argc) {
		code = cli_fail(c.json, CORRAL_E_USAGE, "run: missing command (give COMMAND or -c STRING)");
		goto out;
	}
	if (c.shell && optind_ < argc) {
		code = cli_fail(c.json, CORRAL_E_USAGE, "run: give either -c STRING or COMMAND, not both");
		goto out;
	}
	if (cli_default_root(c.policy, &err) < 0 || corral_sandbox_new(c.policy, &sb, &err) < 0) {
		code = cli_fail_err(c.json, &err);
		goto out;
	}
	for (size_t i = 0, n = corral_sandbox_dropped(sb, &lines); i < n; i++)
		fprintf(stderr, "corral: warning: best-effort: dropped %s\n", lines[i]);

	/* The cancel pipe is how S learns of T's death: no pipe, no run. */
	r = install_cancel();
	if (r < 0) {
		code = cli_fail(c.json, CORRAL_E_SETUP, "cancel pipe: %s", strerror(-r));
		goto out;
	}
	{
		const struct corral_exec_opts opts =
			CORRAL_EXEC_OPTS(.argv = c.shell ? NULL : (const char *const *)argv + optind_,
					 .shell = c.shell, .capture = c.json, .stdin_passthrough = true,
					 .has_cancel_fd = true, .cancel_fd = cancel_pipe[0]);

		fflush(stdout);
		sup.sb = sb;
		sup.opts = &opts;
		r = run_supervised(&sup, c.json);
		if (r < 0) {
			code = cli_fail(c.json, CORRAL_E_SETUP, "starting the supervisor process: %s",
					strerror(-r));
			goto out;
		}
		err = sup.err;
		r = sup.r;
	}
	if (cancel_signo) {
		corral_result_clear(res);
		corral_sandbox_free(sb);
		cli_common_clear(&c);
		reap_supervisor();
		die_of_cancel_signal(true);
	}
	if (r < 0) {
		code = cli_fail_err(c.json, &err);
		goto out;
	}
	if (c.json) {
		/* Streamed: the text can be several times the captured bytes. */
		if (corral_result_json_fprint(res, stdout) < 0 || fputc('\n', stdout) == EOF) {
			code = CLI_EXIT_ERROR;
			goto out;
		}
		code = 0;
	} else {
		if (res->exec_errno)
			fprintf(stderr, "corral: %s: %s\n", c.shell ? "/bin/sh" : argv[optind_],
				res->exec_errno == ENOENT ? "command not found" : strerror(res->exec_errno));
		code = corral_result_exit_code(res);
	}
out:
	corral_result_clear(res);
	corral_sandbox_free(sb);
	cli_common_clear(&c);
	reap_supervisor();
	fflush(stdout);
	return code;
}
