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
 *    child subreaper (once per process, on its first run: in S, never in T), so
 *    it is an ancestor of every process of the run. S dies with T's death
 *    signal turned into a cancel: when T is killed, even by SIGKILL, S kills
 *    the process group, sweeps every re-parented descendant (setsid, double
 *    fork) and reaps them, then exits.
 *
 * S is clone(CLONE_VM | CLONE_SIGHAND | SIGCHLD): no page tables are
 * copied (a fork would pay a copy-on-write fault for every page either
 * process then touches), and T, unlike a CLONE_VFORK parent, stays able
 * to take signals. The price is that S runs on T's memory *and* on T's
 * glibc thread state (no CLONE_SETTLS: errno, malloc's tcache, stdio lock
 * owners, pthread_once and cancellation words, rseq's cpu_id are the same
 * TLS block). So while S runs, T is parked: it makes only raw syscalls
 * that allocate nothing and, as used, cannot fail (so write no errno; see
 * wait_supervisor and on_cancel), and touches no memory S uses. S never
 * prints; T does all the printing after S has exited. S leaves its result
 * in |struct supervisor| on T's stack, and an S that _exit()s holds no
 * lock T could need; an S that died otherwise leaves T only write() and
 * _exit() (supervisor_lost).
 *
 * S's stack is the unused part of T's own stack, below T's parked frame
 * (run_supervised): those pages are mostly mapped already by the setup T
 * just did, and a page fault costs about 10 us on the VMs corral is
 * measured on; a fresh mmap'd stack (a page table, a fault per page S
 * touched) measured 200-300 us more per run. T's signal handlers run on
 * an alternate stack, so nothing of T's is pushed there while S runs.
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
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/cli/cli.h"

/*
 * Code that runs while the other process runs on the same memory and TLS:
 * no sanitizer instrumentation, which keeps per-thread state (ASan's fake
 * stacks, its no-return stack bookkeeping) that T and S would share
 * without knowing it. Same reasoning as child.c's _child_.
 */
#define _shared_tls_ __attribute__((no_sanitize("address", "undefined")))

/*
 * Room left on T's stack, below T's parked frame, for what T still calls
 * while S runs: wait_supervisor and syscall(), a few dozen bytes, and
 * the red zone. Signals are taken on t_altstack. syscall() is T's only
 * library call then (in on_cancel too), and it is called once before
 * clone: in a dynamically linked build a first call goes through the lazy
 * binding resolver, which saves the register file (kilobytes) on the
 * stack, and which T and S must not run at the same time on shared TLS.
 */
#define T_STACK_RESERVE 2048

/* T's signal handlers' stack (SA_ONSTACK): bss, touched only by a signal. */
static char t_altstack[64 * 1024] __attribute__((aligned(64)));

/*
 * SIGTERM/SIGINT/SIGHUP/SIGQUIT cancel the run. T and S share one table
 * of handlers (CLONE_SIGHAND), so S is covered from its first instruction
 * and nobody installs anything twice; on_cancel tells the two apart by
 * pid. In S it writes the signal number to a self-pipe the engine polls
 * (the engine kills and reaps the whole tree and returns); in T it
 * forwards the signal to S. Either records it in |cancel_signo| (shared
 * memory), and T, once S has exited, dies of that signal.
 */
static int cancel_pipe[2] = { -1, -1 };
static volatile sig_atomic_t cancel_signo;
static volatile sig_atomic_t supervisor_pid; /* S, once T knows it; 0 once reaped */
static pid_t top_pid;                        /* T */
static const int cancel_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
#define N_CANCEL_SIGNALS (sizeof(cancel_signals) / sizeof(cancel_signals[0]))

/* S's death signal when T dies: one S handles as a cancel. */
#define PARENT_DEATH_SIGNAL SIGTERM

/* Shared by T and S: written by T before clone, by S until it exits. */
struct supervisor {
	struct corral_sandbox *sb;
	const struct corral_exec_opts *opts;
	struct corral_result res;
	struct corral_error err;
	int r;
	bool done; /* S finished corral_sandbox_exec and stored r, res, err */
	bool have_cpus;
	cpu_set_t cpus; /* T's affinity, restored after S pinned T to its own CPU */
};

/*
 * In S: errno saved and restored as any handler does (S is the one using
 * it; T is parked). In T: errno is not touched at all, since it is S's
 * errno too and a restore would undo what S wrote meanwhile; the kill
 * succeeds on S whether it runs or is a zombie (T reaps S only after
 * clearing supervisor_pid), so syscall() writes none. The fence pairs with
 * run_supervised's: a signal that lands before T knows S's pid is
 * forwarded there instead (Dekker: store, fence, load on both sides).
 */
static _shared_tls_ void on_cancel(int sig)
{
	__atomic_store_n(&cancel_signo, sig, __ATOMIC_SEQ_CST);
	if (syscall(SYS_getpid) != top_pid) {
		int saved = errno;
		unsigned char b = (unsigned char)sig;
		ssize_t n __attribute__((unused));

		n = write(cancel_pipe[1], &b, 1);
		errno = saved;
	} else {
		pid_t pid = __atomic_load_n(&supervisor_pid, __ATOMIC_SEQ_CST);

		if (pid > 0)
			syscall(SYS_kill, (long)pid, (long)sig);
	}
}

/*
 * The pipe, and the handlers on T's alternate stack (S's stack lies below
 * T's frame; the kernel gives a CLONE_VM child no alternate stack, so in S
 * they run on S's own). SA_RESTART: T's waitid must not fail with EINTR.
 */
static int install_cancel(void)
{
	stack_t alt = { .ss_sp = t_altstack, .ss_size = sizeof(t_altstack) };
	struct sigaction sa = { .sa_handler = on_cancel, .sa_flags = SA_RESTART | SA_ONSTACK };

	if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0 || sigaltstack(&alt, NULL) < 0)
		return -errno;
	/* Also binds syscall() now, in a dynamic build: see T_STACK_RESERVE. */
	top_pid = (pid_t)syscall(SYS_getpid);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_CANCEL_SIGNALS; i++)
		sigaction(cancel_signals[i], &sa, NULL);
	return 0;
}

/* |flush|: false when S died abnormally (stdio may be mid-update). */
static _shared_tls_ void die_of_cancel_signal(bool flush)
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
 * S: first the death signal, then the check that T did not die before it
 * was set (getppid is then init or a subreaper).
 */
static _shared_tls_ int supervisor_main(void *arg)
{
	struct supervisor *s = arg;

	/* Started on T's CPU (run_supervised); the engine pins S again around its child. */
	if (s->have_cpus)
		sched_setaffinity(0, sizeof(s->cpus), &s->cpus);
	if (prctl(PR_SET_PDEATHSIG, PARENT_DEATH_SIGNAL, 0, 0, 0) < 0 || getppid() != top_pid)
		_exit(1); /* T is gone (or cannot be followed): start nothing */
	/*
	 * Out of T's process group, unless the run is interactive (the
	 * engine's test: job control needs S in the terminal's foreground
	 * group). A SIGKILL to T's whole group (kill -9 -PGID, a shell's
	 * kill -9 %N) then kills T alone, and S, told by the death signal,
	 * kills the tree and removes what the run made (as root its watchdog
	 * stays out of reach too).
	 */
	if (!(s->opts->stdin_passthrough && !s->opts->capture && !s->opts->stdin_data && isatty(0) &&
	      tcgetpgrp(0) == getpgrp()))
		(void)setpgid(0, 0);
	s->r = corral_sandbox_exec(s->sb, s->opts, &s->res, &s->err);
	s->done = true;
	if (s->have_cpus) {
		unsigned cpu;
		cpu_set_t one;

		/*
		 * T wakes when S exits: on S's CPU, not on the idle one T slept
		 * on (waking an idle vCPU costs tens of microseconds). The raw
		 * getcpu: glibc's reads rseq's cpu_id, which in S is T's.
		 */
		if (syscall(SYS_getcpu, &cpu, NULL, NULL) == 0 && cpu < CPU_SETSIZE) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(top_pid, sizeof(one), &one);
		}
	}
	_exit(0);
}

/*
 * T, from clone until S has exited: raw syscalls only (no glibc wrapper
 * frames below T's reserve, no sanitizer interceptor), and none that
 * writes errno (it is S's errno): the cancel handlers carry SA_RESTART, so
 * waitid is restarted rather than failing with EINTR, and it cannot fail
 * otherwise (S is our unreaped child). WNOWAIT keeps S a zombie, so that
 * on_cancel never signals a recycled pid. Returns -1 only if waitid
 * failed anyway (errno is then not to be trusted: it is not read).
 */
static _shared_tls_ int wait_supervisor(pid_t pid, siginfo_t *si)
{
	for (int tries = 0; tries < 1000; tries++) {
		si->si_pid = 0;
		if (syscall(SYS_waitid, P_PID, (long)pid, si, WEXITED | WNOWAIT | __WALL, NULL) == 0 &&
		    si->si_pid == pid)
			return 0;
	}
	return -1;
}

/* An address below the caller's frame: where T's stack is free. */
static __attribute__((noinline)) _shared_tls_ uintptr_t below_this_frame(void)
{
	volatile char here = 0;

	return (uintptr_t)&here;
}

/*
 * Reap S, after corral_sandbox_free joined the sandbox's helper thread:
 * this thread is then the only one a cancel signal can land on, so once
 * they are blocked here no on_cancel can run with S's pid.
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

static _shared_tls_ size_t fmt_uint(char *p, unsigned v)
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
 * the middle of malloc or stdio, on this process's own state, and left
 * sanitizer shadow on the stack below (hence no instrumentation here).
 */
static _shared_tls_ _Noreturn void supervisor_lost(bool json, const siginfo_t *si)
{
	char buf[256];
	size_t n = 0;
	ssize_t w __attribute__((unused));

#define PUT(lit) (memcpy(buf + n, (lit), sizeof(lit) - 1), n += sizeof(lit) - 1)
	/* Not with S perhaps alive (no |si|): the handlers are S's too. */
	if (cancel_signo && si)
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
	_exit(cancel_signo ? 128 + cancel_signo : CLI_EXIT_ERROR);
}

/*
 * Run the command under S. Returns 0 with |s| filled in by S, or -errno
 * when S could not be started (nothing ran). Does not return when S
 * ended without a result.
 */
static _shared_tls_ int run_supervised(struct supervisor *s, bool json)
{
	siginfo_t si;
	uintptr_t top;
	pid_t pid;
	int sig;

	s->have_cpus = sched_getaffinity(0, sizeof(s->cpus), &s->cpus) == 0;
	/*
	 * T is pinned to its CPU across clone, so S starts here rather than on
	 * an idle vCPU, whose wake-up costs tens of microseconds on a
	 * paravirtualized host; S restores its mask as it starts. T itself
	 * stays pinned while it sleeps, and gets the mask back after S exits.
	 */
	if (s->have_cpus) {
		unsigned cpu;
		cpu_set_t one;

		if (syscall(SYS_getcpu, &cpu, NULL, NULL) == 0 && cpu < CPU_SETSIZE) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
	}
	top = (below_this_frame() - T_STACK_RESERVE) & ~(uintptr_t)63;
	pid = clone(supervisor_main, (void *)top, CLONE_VM | CLONE_SIGHAND | SIGCHLD, s);
	if (pid < 0)
		return -errno;
	__atomic_store_n(&supervisor_pid, pid, __ATOMIC_SEQ_CST);
	sig = __atomic_load_n(&cancel_signo, __ATOMIC_SEQ_CST);
	if (sig)
		syscall(SYS_kill, (long)pid, (long)sig); /* came before S's pid was known */
	if (wait_supervisor(pid, &si) < 0)
		/* Cannot happen; if it does, T must not go on while S may run: dying makes S cancel. */
		supervisor_lost(json, NULL);
	/* S has exited: this process's state is T's alone again. */
	if (s->have_cpus)
		sched_setaffinity(0, sizeof(s->cpus), &s->cpus);
	if (si.si_code != CLD_EXITED || si.si_status != 0 || !s->done)
		supervisor_lost(json, &si);
	return 0;
}

int cli_run(int argc, char **argv)
{
	struct cli_common c;
	struct corral_error err = {};
	struct corral_sandbox *sb = NULL;
	struct supervisor sup = { .res = CORRAL_RESULT_INIT };
	struct corral_result *res = &sup.res;
	const char *const *lines = NULL;
	int optind_, r, code;
	bool closed[3] = {};

	/* The command inherits 0..2 as they are (unless --json captures 1 and 2): closed ones closed. */
	if (cli_hold_stdio(closed) < 0)
		return CLI_EXIT_ERROR;

	r = cli_parse_common(argc, argv, "run", true, &c, &optind_);
	if (r == -1)
		return 0;
	if (r)
		return r;
	if (c.json && closed[1]) {
		/* Said on stderr, before anything runs: the result would go nowhere. */
		code = cli_fail(false, CORRAL_E_USAGE, "--json: standard output is closed, so the result could not be printed");
		goto out;
	}
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
	/*
	 * The docker client is a program of the host's, started with corral's
	 * fds 0..2: it gets /dev/null for a closed one, as a Go program needs
	 * (its own first fd would otherwise become its stdin or stdout).
	 */
	if (corral_sandbox_provider(sb) == CORRAL_PROVIDER_DOCKER)
		for (int fd = 0; fd < 3; fd++)
			if (closed[fd])
				fcntl(fd, F_SETFD, 0);
	for (size_t i = 0, n = corral_sandbox_dropped(sb, &lines); i < n; i++)
		fprintf(stderr, "corral: warning: best-effort: dropped %s\n", lines[i]);

	/* The cancel pipe is how S learns of T's death: no pipe, no run. */
	r = install_cancel();
	if (r < 0) {
		code = cli_fail(c.json, CORRAL_E_SETUP, "cancel pipe or signal stack: %s", corral_strerror(-r));
		goto out;
	}
	{
		/* A captured run is never interactive: an open pipe must not hang it until the deadline. */
		bool pass = c.stdin_mode == CLI_STDIN_PASS || (c.stdin_mode == CLI_STDIN_DEFAULT && !c.json);
		const struct corral_exec_opts opts =
			CORRAL_EXEC_OPTS(.argv = c.shell ? NULL : (const char *const *)argv + optind_,
					 .shell = c.shell, .capture = c.json, .stdin_passthrough = pass,
					 .has_cancel_fd = true, .cancel_fd = cancel_pipe[0]);

		fflush(stdout);
		sup.sb = sb;
		sup.opts = &opts;
		r = run_supervised(&sup, c.json);
		if (r < 0) {
			code = cli_fail(c.json, CORRAL_E_SETUP, "starting the supervisor process: %s",
					corral_strerror(-r));
			goto out;
		}
		err = sup.err;
		r = sup.r;
	}
	if (cancel_signo) {
		/*
		 * Cut short by a signal to corral: with --json, what the run
		 * got so far (the tree killed: signal 9, timed_out false, the
		 * output until then), then corral dies of that signal as it
		 * would have (128+N). Best effort: a failed write changes nothing.
		 */
		if (c.json && r >= 0 && corral_result_json_fprint(res, stdout) >= 0)
			fputc('\n', stdout);
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
		if (corral_result_json_fprint(res, stdout) < 0 || fputc('\n', stdout) == EOF ||
		    fflush(stdout) == EOF) {
			/* Said here, while errno is the write's; main would only know that one failed. */
			fprintf(stderr, "corral: writing the result to standard output: %s\n",
				corral_strerror(errno ? errno : EIO));
			clearerr(stdout);
			code = CLI_EXIT_ERROR;
			goto out;
		}
		code = 0;
	} else {
		if (res->exec_errno) {
			char msg[512];

			corral_result_exec_error(res, c.shell ? corral_sandbox_shell(sb) : argv[optind_], msg, sizeof(msg));
			fputs(msg, stderr);
		}
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
