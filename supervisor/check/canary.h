/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The canaries of `corral check`: small attacks, each with its positive
 * control, that run as the confined command itself. corral_check()
 * executes the host program (/proc/self/exe, resolved before anything is
 * confined) as `EXE __canary NAME ARG...` through corral_sandbox_exec, so
 * a canary goes through exactly the steps a user's command does (execve
 * included: close-on-exec fds, the scrubbed environment, the seccomp
 * filter at exec). The host program dispatches that argv to
 * corral_canary_main() (the corral CLI does; see corral.h).
 *
 * Protocol: a canary prints one line on stdout, "RESULT OBSERVED", where
 * RESULT is one of the words below, and exits 0. Some canaries are judged
 * by the parent instead (killed by a limit, the deadline, a daemon left
 * behind); check.c knows which.
 */
#ifndef CORRAL_CANARY_H
#define CORRAL_CANARY_H

#define CANARY_VERB "__canary"
#define CANARY_HELD "held"
#define CANARY_BROKEN "broken"
#define CANARY_INCONCLUSIVE "inconclusive" /* the positive control failed */
#define CANARY_NA "na"

/* The greeting of the "hello" canary (check's preflight). */
#define CANARY_HELLO "corral-canary-v1"

/* Environment variable of the outside sleeper, and the one check plants in its own environment. */
#define CANARY_SECRET_VAR "CORRAL_CHECK_SECRET"

#endif
