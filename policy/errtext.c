/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text corral gives for an errno value and a signal, the same with
 * every C library. Messages are part of what users script against
 * (`corral: <stage>: <reason>`), and the C libraries disagree on the
 * reasons: musl says "Symbolic link loop" where glibc says "Too many
 * levels of symbolic links", "Out of memory" for "Cannot allocate
 * memory". corral's static command-line binary is built against musl
 * where it can be (its start-up is a fraction of glibc's; see
 * docs/benchmarks.md), the library against the system's C library, so
 * both take their words from here: the Linux errno texts as glibc
 * words them. Pure, thread-safe, no locale.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "internal/util.h"

struct errtext {
	const char *name;
	const char *text;
};

static const struct errtext errtexts[] = {
	[0] = { NULL, "Success" },
	[EPERM] = { "EPERM", "Operation not permitted" },
	[ENOENT] = { "ENOENT", "No such file or directory" },
	[ESRCH] = { "ESRCH", "No such process" },
	[EINTR] = { "EINTR", "Interrupted system call" },
	[EIO] = { "EIO", "Input/output error" },
	[ENXIO] = { "ENXIO", "No such device or address" },
	[E2BIG] = { "E2BIG", "Argument list too long" },
	[ENOEXEC] = { "ENOEXEC", "Exec format error" },
	[EBADF] = { "EBADF", "Bad file descriptor" },
	[ECHILD] = { "ECHILD", "No child processes" },
	[EAGAIN] = { "EAGAIN", "Resource temporarily unavailable" },
	[ENOMEM] = { "ENOMEM", "Cannot allocate memory" },
	[EACCES] = { "EACCES", "Permission denied" },
	[EFAULT] = { "EFAULT", "Bad address" },
	[ENOTBLK] = { "ENOTBLK", "Block device required" },
	[EBUSY] = { "EBUSY", "Device or resource busy" },
	[EEXIST] = { "EEXIST", "File exists" },
	[EXDEV] = { "EXDEV", "Invalid cross-device link" },
	[ENODEV] = { "ENODEV", "No such device" },
	[ENOTDIR] = { "ENOTDIR", "Not a directory" },
	[EISDIR] = { "EISDIR", "Is a directory" },
	[EINVAL] = { "EINVAL", "Invalid argument" },
	[ENFILE] = { "ENFILE", "Too many open files in system" },
	[EMFILE] = { "EMFILE", "Too many open files" },
	[ENOTTY] = { "ENOTTY", "Inappropriate ioctl for device" },
	[ETXTBSY] = { "ETXTBSY", "Text file busy" },
	[EFBIG] = { "EFBIG", "File too large" },
	[ENOSPC] = { "ENOSPC", "No space left on device" },
	[ESPIPE] = { "ESPIPE", "Illegal seek" },
	[EROFS] = { "EROFS", "Read-only file system" },
	[EMLINK] = { "EMLINK", "Too many links" },
	[EPIPE] = { "EPIPE", "Broken pipe" },
	[EDOM] = { "EDOM", "Numerical argument out of domain" },
	[ERANGE] = { "ERANGE", "Numerical result out of range" },
	[EDEADLK] = { "EDEADLK", "Resource deadlock avoided" },
	[ENAMETOOLONG] = { "ENAMETOOLONG", "File name too long" },
	[ENOLCK] = { "ENOLCK", "No locks available" },
	[ENOSYS] = { "ENOSYS", "Function not implemented" },
	[ENOTEMPTY] = { "ENOTEMPTY", "Directory not empty" },
	[ELOOP] = { "ELOOP", "Too many levels of symbolic links" },
	[ENOMSG] = { "ENOMSG", "No message of desired type" },
	[EIDRM] = { "EIDRM", "Identifier removed" },
	[ECHRNG] = { "ECHRNG", "Channel number out of range" },
	[EL2NSYNC] = { "EL2NSYNC", "Level 2 not synchronized" },
	[EL3HLT] = { "EL3HLT", "Level 3 halted" },
	[EL3RST] = { "EL3RST", "Level 3 reset" },
	[ELNRNG] = { "ELNRNG", "Link number out of range" },
	[EUNATCH] = { "EUNATCH", "Protocol driver not attached" },
	[ENOCSI] = { "ENOCSI", "No CSI structure available" },
	[EL2HLT] = { "EL2HLT", "Level 2 halted" },
	[EBADE] = { "EBADE", "Invalid exchange" },
	[EBADR] = { "EBADR", "Invalid request descriptor" },
	[EXFULL] = { "EXFULL", "Exchange full" },
	[ENOANO] = { "ENOANO", "No anode" },
	[EBADRQC] = { "EBADRQC", "Invalid request code" },
	[EBADSLT] = { "EBADSLT", "Invalid slot" },
	[EBFONT] = { "EBFONT", "Bad font file format" },
	[ENOSTR] = { "ENOSTR", "Device not a stream" },
	[ENODATA] = { "ENODATA", "No data available" },
	[ETIME] = { "ETIME", "Timer expired" },
	[ENOSR] = { "ENOSR", "Out of streams resources" },
	[ENONET] = { "ENONET", "Machine is not on the network" },
	[ENOPKG] = { "ENOPKG", "Package not installed" },
	[EREMOTE] = { "EREMOTE", "Object is remote" },
	[ENOLINK] = { "ENOLINK", "Link has been severed" },
	[EADV] = { "EADV", "Advertise error" },
	[ESRMNT] = { "ESRMNT", "Srmount error" },
	[ECOMM] = { "ECOMM", "Communication error on send" },
	[EPROTO] = { "EPROTO", "Protocol error" },
	[EMULTIHOP] = { "EMULTIHOP", "Multihop attempted" },
	[EDOTDOT] = { "EDOTDOT", "RFS specific error" },
	[EBADMSG] = { "EBADMSG", "Bad message" },
	[EOVERFLOW] = { "EOVERFLOW", "Value too large for defined data type" },
	[ENOTUNIQ] = { "ENOTUNIQ", "Name not unique on network" },
	[EBADFD] = { "EBADFD", "File descriptor in bad state" },
	[EREMCHG] = { "EREMCHG", "Remote address changed" },
	[ELIBACC] = { "ELIBACC", "Can not access a needed shared library" },
	[ELIBBAD] = { "ELIBBAD", "Accessing a corrupted shared library" },
	[ELIBSCN] = { "ELIBSCN", ".lib section in a.out corrupted" },
	[ELIBMAX] = { "ELIBMAX", "Attempting to link in too many shared libraries" },
	[ELIBEXEC] = { "ELIBEXEC", "Cannot exec a shared library directly" },
	[EILSEQ] = { "EILSEQ", "Invalid or incomplete multibyte or wide character" },
	[ERESTART] = { "ERESTART", "Interrupted system call should be restarted" },
	[ESTRPIPE] = { "ESTRPIPE", "Streams pipe error" },
	[EUSERS] = { "EUSERS", "Too many users" },
	[ENOTSOCK] = { "ENOTSOCK", "Socket operation on non-socket" },
	[EDESTADDRREQ] = { "EDESTADDRREQ", "Destination address required" },
	[EMSGSIZE] = { "EMSGSIZE", "Message too long" },
	[EPROTOTYPE] = { "EPROTOTYPE", "Protocol wrong type for socket" },
	[ENOPROTOOPT] = { "ENOPROTOOPT", "Protocol not available" },
	[EPROTONOSUPPORT] = { "EPROTONOSUPPORT", "Protocol not supported" },
	[ESOCKTNOSUPPORT] = { "ESOCKTNOSUPPORT", "Socket type not supported" },
	[EOPNOTSUPP] = { "EOPNOTSUPP", "Operation not supported" },
	[EPFNOSUPPORT] = { "EPFNOSUPPORT", "Protocol family not supported" },
	[EAFNOSUPPORT] = { "EAFNOSUPPORT", "Address family not supported by protocol" },
	[EADDRINUSE] = { "EADDRINUSE", "Address already in use" },
	[EADDRNOTAVAIL] = { "EADDRNOTAVAIL", "Cannot assign requested address" },
	[ENETDOWN] = { "ENETDOWN", "Network is down" },
	[ENETUNREACH] = { "ENETUNREACH", "Network is unreachable" },
	[ENETRESET] = { "ENETRESET", "Network dropped connection on reset" },
	[ECONNABORTED] = { "ECONNABORTED", "Software caused connection abort" },
	[ECONNRESET] = { "ECONNRESET", "Connection reset by peer" },
	[ENOBUFS] = { "ENOBUFS", "No buffer space available" },
	[EISCONN] = { "EISCONN", "Transport endpoint is already connected" },
	[ENOTCONN] = { "ENOTCONN", "Transport endpoint is not connected" },
	[ESHUTDOWN] = { "ESHUTDOWN", "Cannot send after transport endpoint shutdown" },
	[ETOOMANYREFS] = { "ETOOMANYREFS", "Too many references: cannot splice" },
	[ETIMEDOUT] = { "ETIMEDOUT", "Connection timed out" },
	[ECONNREFUSED] = { "ECONNREFUSED", "Connection refused" },
	[EHOSTDOWN] = { "EHOSTDOWN", "Host is down" },
	[EHOSTUNREACH] = { "EHOSTUNREACH", "No route to host" },
	[EALREADY] = { "EALREADY", "Operation already in progress" },
	[EINPROGRESS] = { "EINPROGRESS", "Operation now in progress" },
	[ESTALE] = { "ESTALE", "Stale file handle" },
	[EUCLEAN] = { "EUCLEAN", "Structure needs cleaning" },
	[ENOTNAM] = { "ENOTNAM", "Not a XENIX named type file" },
	[ENAVAIL] = { "ENAVAIL", "No XENIX semaphores available" },
	[EISNAM] = { "EISNAM", "Is a named type file" },
	[EREMOTEIO] = { "EREMOTEIO", "Remote I/O error" },
	[EDQUOT] = { "EDQUOT", "Disk quota exceeded" },
	[ENOMEDIUM] = { "ENOMEDIUM", "No medium found" },
	[EMEDIUMTYPE] = { "EMEDIUMTYPE", "Wrong medium type" },
	[ECANCELED] = { "ECANCELED", "Operation canceled" },
	[ENOKEY] = { "ENOKEY", "Required key not available" },
	[EKEYEXPIRED] = { "EKEYEXPIRED", "Key has expired" },
	[EKEYREVOKED] = { "EKEYREVOKED", "Key has been revoked" },
	[EKEYREJECTED] = { "EKEYREJECTED", "Key was rejected by service" },
	[EOWNERDEAD] = { "EOWNERDEAD", "Owner died" },
	[ENOTRECOVERABLE] = { "ENOTRECOVERABLE", "State not recoverable" },
	[ERFKILL] = { "ERFKILL", "Operation not possible due to RF-kill" },
	[EHWPOISON] = { "EHWPOISON", "Memory page has hardware error" },
};

/* Unknown values: "Unknown error N", as glibc, in a per-thread buffer. */
_public_ const char *corral_strerror(int e)
{
	static __thread char unknown[32];

	if (e >= 0 && (size_t)e < ARRAY_SIZE(errtexts) && errtexts[e].text)
		return errtexts[e].text;
	snprintf(unknown, sizeof(unknown), "Unknown error %d", e);
	return unknown;
}

const char *corral_errno_name(int e)
{
	if (e > 0 && (size_t)e < ARRAY_SIZE(errtexts) && errtexts[e].name)
		return errtexts[e].name;
	return NULL;
}

const char *corral_signal_abbrev(int sig)
{
	static const char *const abbrev[] = {
		[SIGHUP] = "HUP",
		[SIGINT] = "INT",
		[SIGQUIT] = "QUIT",
		[SIGILL] = "ILL",
		[SIGTRAP] = "TRAP",
		[SIGABRT] = "ABRT",
		[SIGBUS] = "BUS",
		[SIGFPE] = "FPE",
		[SIGKILL] = "KILL",
		[SIGUSR1] = "USR1",
		[SIGSEGV] = "SEGV",
		[SIGUSR2] = "USR2",
		[SIGPIPE] = "PIPE",
		[SIGALRM] = "ALRM",
		[SIGTERM] = "TERM",
#ifdef SIGSTKFLT
		[SIGSTKFLT] = "STKFLT",
#endif
		[SIGCHLD] = "CHLD",
		[SIGCONT] = "CONT",
		[SIGSTOP] = "STOP",
		[SIGTSTP] = "TSTP",
		[SIGTTIN] = "TTIN",
		[SIGTTOU] = "TTOU",
		[SIGURG] = "URG",
		[SIGXCPU] = "XCPU",
		[SIGXFSZ] = "XFSZ",
		[SIGVTALRM] = "VTALRM",
		[SIGPROF] = "PROF",
		[SIGWINCH] = "WINCH",
		[SIGPOLL] = "POLL",
		[SIGPWR] = "PWR",
		[SIGSYS] = "SYS",
	};

	if (sig > 0 && (size_t)sig < ARRAY_SIZE(abbrev))
		return abbrev[sig];
	return NULL;
}
