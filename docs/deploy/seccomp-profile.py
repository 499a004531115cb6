#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes docs/deploy/seccomp-corral.json, the seccomp profile a container
runtime (docker --security-opt seccomp=, a Kubernetes Localhost profile)
gives a container that runs corral.

The profile is an allowlist in the OCI/docker JSON format: every system call
named in the kernel's syscall tables of the build host (the UAPI headers'
asm/unistd_64.h, unistd_32.h, unistd_x32.h and asm-generic/unistd.h, which
is aarch64's table), minus REFUSED below (what container runtimes' default
profiles refuse a container, each with our reason), with argument filters
for clone, personality and socket, plus what corral itself needs (NEEDED).
Everything else gets EPERM. It names no capability: the same file works for
docker and for containerd/CRI-O, and a call the runtime's default allows
only with a capability is refused here unless corral needs it (NEEDED) or
the kernel checks that capability itself (KERNEL_CHECKED).

  docs/deploy/seccomp-profile.py            rewrite the committed profile
  docs/deploy/seccomp-profile.py --check    exit 1 when it is not current
  docs/deploy/seccomp-profile.py --stdout   print it

--check regenerates from this host's headers and compares. A profile
generated from newer headers than this host's names calls these headers do
not know: they are kept, so an older build host does not call it stale; a
host with newer headers than the profile's finds the new calls undecided and
says to regenerate.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = os.path.join(HERE, "seccomp-corral.json")

HEADERS = [
    "x86_64-linux-gnu/asm/unistd_64.h",
    "x86_64-linux-gnu/asm/unistd_32.h",
    "x86_64-linux-gnu/asm/unistd_x32.h",
    "asm-generic/unistd.h",
    # Other multiarch layouts of the same tables (an aarch64 build host).
    "aarch64-linux-gnu/asm/unistd.h",
    "asm/unistd_64.h",
    "asm/unistd_32.h",
    "asm/unistd_x32.h",
]

# Macros of the headers that are not system calls, and header spellings
# that libseccomp knows under another name.
NOT_SYSCALLS = {"syscalls", "arch_specific_syscall"}
RENAMED = {"llseek": "_llseek"}

# 32-bit ARM's own calls (its table is arch/arm's, not the generic header
# an x86_64 or aarch64 build host has): its C libraries use them.
ARM_ONLY = ["arm_fadvise64_64", "arm_sync_file_range", "breakpoint", "cacheflush", "recv", "send", "set_tls"]

# What container runtimes' default profiles refuse (docker's and
# containerd's, as docker documents in "Seccomp security profiles for
# Docker"), with why, in our words. A call the runtime allows only with a
# capability (CAP_SYS_ADMIN, CAP_SYS_MODULE, ...) is here too: this profile
# names no capabilities.
REFUSED = {
    # Host-wide state no namespace isolates.
    "acct": "process accounting is host-wide: a container could turn it on or off (also needs CAP_SYS_PACCT)",
    "settimeofday": "the clock is not namespaced: setting it changes the host's time (also needs CAP_SYS_TIME)",
    "stime": "the clock is not namespaced (also needs CAP_SYS_TIME)",
    "clock_settime": "the clock is not namespaced (also needs CAP_SYS_TIME)",
    "clock_settime64": "the clock is not namespaced (also needs CAP_SYS_TIME)",
    "reboot": "reboots the host or loads a new kernel for kexec (also needs CAP_SYS_BOOT)",
    "kexec_load": "loads a new kernel to boot into (also needs CAP_SYS_BOOT)",
    "kexec_file_load": "loads a new kernel to boot into (also needs CAP_SYS_BOOT)",
    "swapon": "swap is host-wide (also needs CAP_SYS_ADMIN)",
    "swapoff": "swap is host-wide (also needs CAP_SYS_ADMIN)",
    "syslog": "reads and clears the kernel's log, which leaks kernel addresses (also needs CAP_SYSLOG)",
    "sethostname": "a container's name belongs to its runtime (also needs CAP_SYS_ADMIN in its UTS namespace)",
    "setdomainname": "as sethostname",
    "vhangup": "hangs up the controlling terminal (also needs CAP_SYS_TTY_CONFIG)",
    "quotactl": "disk quotas are the host's (also needs CAP_SYS_ADMIN)",
    "quotactl_fd": "as quotactl",
    # Kernel modules: code into the host's kernel.
    "init_module": "loads a kernel module (also needs CAP_SYS_MODULE)",
    "finit_module": "loads a kernel module (also needs CAP_SYS_MODULE)",
    "delete_module": "unloads a kernel module (also needs CAP_SYS_MODULE)",
    "create_module": "obsolete module call, gone from current kernels",
    "get_kernel_syms": "obsolete module call, gone from current kernels",
    "query_module": "obsolete module call, gone from current kernels",
    # Keyrings are not namespaced.
    "add_key": "the kernel's keyrings are not namespaced: keys could be read or planted across containers",
    "request_key": "as add_key",
    "keyctl": "as add_key",
    # Mounts and namespaces: the container's view of the system.
    "mount": "mounting could undo the runtime's masks and read-only paths (also needs CAP_SYS_ADMIN)",
    "umount": "as mount",
    "umount2": "as mount",
    "pivot_root": "as mount",
    "fsopen": "the new mount interface: as mount",
    "fsconfig": "the new mount interface: as mount",
    "fsmount": "the new mount interface: as mount",
    "fspick": "the new mount interface: as mount",
    "move_mount": "the new mount interface: as mount",
    "open_tree": "the new mount interface: as mount",
    "mount_setattr": "the new mount interface: as mount",
    "unshare": "new namespaces, a user namespace above all, open kernel code to an unprivileged process "
               "that the container's own isolation depends on (clone's namespace flags are filtered below)",
    "setns": "joins another namespace (also needs CAP_SYS_ADMIN)",
    # File handles walk around the container's mount namespace.
    "open_by_handle_at": "opens any file of a filesystem by handle, outside the container's mounts "
                         "(the old 'shocker' escape; also needs CAP_DAC_READ_SEARCH)",
    "name_to_handle_at": "makes the handles open_by_handle_at takes",
    # Kernel interfaces with a large attack surface or that leak host state.
    "bpf": "loads programs into the kernel (also needs CAP_BPF or CAP_SYS_ADMIN)",
    "perf_event_open": "performance monitoring observes the host and has a history of kernel bugs "
                       "(also needs CAP_PERFMON where perf_event_paranoid asks)",
    "userfaultfd": "lets a process stall the kernel in a page fault at will, a common step in exploits",
    "fanotify_init": "watches filesystems host-wide (also needs CAP_SYS_ADMIN)",
    "lookup_dcookie": "profiling interface that reads kernel state (also needs CAP_SYS_ADMIN); gone from current kernels",
    "io_uring_setup": "io_uring has a long record of kernel exploits; runtimes' defaults refuse it "
                      "(corral refuses it inside its sandbox too)",
    "io_uring_enter": "as io_uring_setup",
    "io_uring_register": "as io_uring_setup",
    "kcmp": "compares kernel objects of other processes, which leaks kernel pointers' order (also needs ptrace access)",
    "process_madvise": "advises another process's memory (the runtime allows it only with CAP_SYS_PTRACE)",
    # Hardware and memory placement.
    "iopl": "raw I/O port access (also needs CAP_SYS_RAWIO)",
    "ioperm": "raw I/O port access (also needs CAP_SYS_RAWIO)",
    "vm86": "x86 virtual 8086 mode, kernel attack surface with no use in a container",
    "vm86old": "as vm86",
    "mbind": "NUMA placement can degrade the host's other tenants (the runtime allows it only with CAP_SYS_NICE)",
    "set_mempolicy": "as mbind",
    "set_mempolicy_home_node": "as mbind",
    "get_mempolicy": "as mbind",
    "move_pages": "moves another process's pages between NUMA nodes (as mbind)",
    "migrate_pages": "as move_pages",
    # Obsolete calls, unimplemented or removed; refusing them costs nothing.
    "_sysctl": "the binary sysctl interface, removed in Linux 5.5",
    "sysfs": "obsolete filesystem-type query",
    "ustat": "obsolete filesystem statistics, leaks host devices",
    "uselib": "obsolete a.out library loader",
    "nfsservctl": "removed in Linux 3.1",
    "bdflush": "removed in Linux 5.15",
    "afs_syscall": "never implemented",
    "break": "never implemented",
    "ftime": "never implemented",
    "getpmsg": "never implemented",
    "gtty": "never implemented",
    "idle": "internal to early boot; always refused",
    "lock": "never implemented",
    "mpx": "never implemented",
    "prof": "never implemented",
    "profil": "never implemented",
    "putpmsg": "never implemented",
    "security": "never implemented",
    "stty": "never implemented",
    "tuxcall": "never implemented",
    "ulimit": "never implemented",
    "vserver": "never implemented",
    # Allowed below with argument filters only.
    "clone": "allowed below without namespace flags",
    "clone3": "answered ENOSYS below: its flags are in memory a filter cannot read, so the C library falls back to clone",
    "personality": "allowed below for the Linux personas only",
    "socket": "allowed below for every address family but AF_ALG and AF_VSOCK",
}

# Calls the runtime's default allows only with a capability that the
# kernel checks itself as well: allowed here, so a container given the
# capability keeps what it had under the runtime's default.
KERNEL_CHECKED = {
    "chroot": "the kernel requires CAP_SYS_CHROOT (docker's default capability set has it)",
}

# What corral needs beyond a runtime's default (docs/deploy.md).
NEEDED = {
    "pidfd_getfd": "Unix-socket mediation takes the socket of a command's connect through it; the kernel "
                   "still asks ptrace access to the target (same uid, or CAP_SYS_PTRACE), so it reaches "
                   "nothing process_vm_readv could not",
    "process_vm_readv": "the mediation reads a command's socket address; ptrace access as above (runtimes "
                        "allow it without a capability since Linux 4.8)",
    "process_vm_writev": "as process_vm_readv, its pair",
    "ptrace": "corral check's canaries attack ptrace and their controls need it; since Linux 4.8 a tracer "
              "cannot step around the tracee's seccomp filter (runtimes allow it without a capability)",
    "seccomp": "corral's own filter and its user notification",
    "landlock_create_ruleset": "corral's filesystem promises",
    "landlock_add_rule": "corral's filesystem promises",
    "landlock_restrict_self": "corral's filesystem promises",
    "pidfd_open": "corral watches and signals its commands through pidfds",
    "pidfd_send_signal": "as pidfd_open",
}

# clone's namespace flags: CLONE_NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET, and CLONE_NEWNS
# (0x7E020000); a clone with any of them set is refused.
CLONE_NS_FLAGS = 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00020000
# personality(2): PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32, and the query 0xffffffff.
PERSONAS = [0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF]
AF_ALG, AF_VSOCK = 38, 40


def table(include):
    names = set()
    used = []
    for h in HEADERS:
        p = os.path.join(include, h)
        if not os.path.exists(p):
            continue
        used.append(p)
        with open(p, encoding="utf-8") as f:
            for m in re.finditer(r"^#define __NR_(\w+)\s", f.read(), re.M):
                n = RENAMED.get(m.group(1), m.group(1))
                if n not in NOT_SYSCALLS:
                    names.add(n)
    if not used:
        sys.exit(f"seccomp-profile: no syscall table under {include} (install the kernel's UAPI headers, linux-libc-dev)")
    return names


def profile(names):
    assert not (set(NEEDED) | set(KERNEL_CHECKED)) & set(REFUSED), "a call both refused and allowed"
    allowed = sorted((names | set(ARM_ONLY) | set(NEEDED) | set(KERNEL_CHECKED)) - set(REFUSED))
    rule = lambda names, **kw: dict({"names": names, "action": "SCMP_ACT_ALLOW"}, **kw)
    arg = lambda index, value, op: {"index": index, "value": value, "op": op}
    syscalls = [rule(allowed)]
    syscalls.append(rule(["clone"], args=[arg(0, CLONE_NS_FLAGS, "SCMP_CMP_MASKED_EQ") | {"valueTwo": 0}]))
    syscalls.append({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38})
    for p in PERSONAS:
        syscalls.append(rule(["personality"], args=[arg(0, p, "SCMP_CMP_EQ")]))
    syscalls.append(rule(["socket"], args=[arg(0, AF_ALG, "SCMP_CMP_LT")]))
    syscalls.append(rule(["socket"], args=[arg(0, AF_ALG + 1, "SCMP_CMP_EQ")]))
    syscalls.append(rule(["socket"], args=[arg(0, AF_VSOCK, "SCMP_CMP_GT")]))
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
        "archMap": [
            {"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]},
            {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]},
        ],
        "syscalls": syscalls,
    }


def render(p):
    return json.dumps(p, indent=2) + "\n"


def committed_names():
    """The names the committed profile allows outright (its first rule)."""
    try:
        with open(PROFILE, encoding="utf-8") as f:
            return set(json.load(f)["syscalls"][0]["names"])
    except (OSError, ValueError, KeyError, IndexError):
        return set()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed profile is not current")
    ap.add_argument("--stdout", action="store_true", help="print the profile instead of writing it")
    ap.add_argument("--include", default="/usr/include", help="where the kernel's UAPI headers are (default /usr/include)")
    a = ap.parse_args()
    names = table(a.include)
    if a.check:
        # Calls of newer headers than ours, in the committed file, stay.
        want = render(profile(names | committed_names()))
        try:
            with open(PROFILE, encoding="utf-8") as f:
                have = f.read()
        except OSError as e:
            sys.exit(f"seccomp-profile: {PROFILE}: {e.strerror}: run docs/deploy/seccomp-profile.py")
        if have != want:
            new = sorted(names - committed_names() - set(REFUSED))
            why = f"this host's syscall table has calls it does not decide: {' '.join(new)}" if new else \
                "it differs from what docs/deploy/seccomp-profile.py generates"
            print(f"seccomp-corral.json is stale: {why}; run docs/deploy/seccomp-profile.py and commit the result")
            return 1
        print(f"seccomp-corral.json is current ({len(json.loads(have)['syscalls'][0]['names'])} calls allowed outright)")
        return 0
    out = render(profile(names))
    if a.stdout:
        sys.stdout.write(out)
    else:
        with open(PROFILE, "w", encoding="utf-8") as f:
            f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
