# System V IPC and POSIX message queues, for tests/escape/proc.sh (ctypes: no module needed).
#   host-shm SECRET      make a 0600 segment holding SECRET; print its id
#   find-shm SECRET      walk every segment (shmctl SHM_STAT, no key needed),
#                        attach it and exit 0 if one holds SECRET
#   host-mq NAME         make POSIX queue NAME (0600) and leave it
#   unlink-mq NAME       mq_unlink NAME
#   private-shm          shmget(IPC_PRIVATE) and attach: exit 0 if it works
import ctypes, os, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
IPC_PRIVATE, IPC_CREAT, SHM_STAT, SHM_RDONLY, IPC_INFO = 0, 0o1000, 13, 0o10000, 3


def fail(what):
    e = ctypes.get_errno()
    print("%s: %s" % (what, os.strerror(e)), file=sys.stderr)
    sys.exit(1)


cmd, arg = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
if cmd == "host-shm":
    sid = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    if sid < 0:
        fail("shmget")
    a = libc.shmat(sid, None, 0)
    if a in (None, 2**64 - 1):
        fail("shmat")
    ctypes.memmove(a, arg.encode(), len(arg))
    libc.shmdt(ctypes.c_void_p(a))
    print(sid)
elif cmd == "find-shm":
    buf = ctypes.create_string_buffer(512)
    maxidx = libc.shmctl(0, IPC_INFO, buf)
    if maxidx < 0:
        fail("shmctl(IPC_INFO)")
    for idx in range(maxidx + 1):
        sid = libc.shmctl(idx, SHM_STAT, buf)
        if sid < 0:
            continue
        a = libc.shmat(sid, None, SHM_RDONLY)
        if a in (None, 2**64 - 1):
            continue
        if ctypes.string_at(a, len(arg)) == arg.encode():
            print("read another process's segment %d" % sid)
            sys.exit(0)
    sys.exit(1)
elif cmd == "host-mq":
    if libc.mq_open(arg.encode(), os.O_CREAT | os.O_RDWR, 0o600, None) < 0:
        fail("mq_open")
elif cmd == "unlink-mq":
    if libc.mq_unlink(arg.encode()) < 0:
        fail("mq_unlink")
elif cmd == "private-shm":
    sid = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    if sid < 0:
        fail("shmget")
    libc.shmctl(sid, 0, None)  # IPC_RMID
else:
    sys.exit(2)
