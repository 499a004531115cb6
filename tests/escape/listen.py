# Host-side targets of the network attacks: TCP and UDP on 127.0.0.1 and
# [::1], a pathname Unix socket and an abstract one. Writes "name port" lines
# to argv[1] once listening, and appends one line per connection or datagram
# received to argv[2]. Runs until killed.
import os, select, socket, sys

ready, hits, upath, abstract = sys.argv[1:5]
socks = {}
lines = []

def add(name, fam, typ, addr):
    try:
        s = socket.socket(fam, typ)
        s.bind(addr)
        if typ == socket.SOCK_STREAM:
            s.listen(16)
    except OSError:
        return
    socks[s] = name
    if fam in (socket.AF_INET, socket.AF_INET6):
        lines.append("%s %d" % (name, s.getsockname()[1]))

add("tcp4", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 0))
add("udp4", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 0))
add("tcp6", socket.AF_INET6, socket.SOCK_STREAM, ("::1", 0))
add("udp6", socket.AF_INET6, socket.SOCK_DGRAM, ("::1", 0))
add("unix", socket.AF_UNIX, socket.SOCK_STREAM, upath)
os.chmod(upath, 0o777)
add("abstract", socket.AF_UNIX, socket.SOCK_STREAM, "\0" + abstract)
with open(ready + ".tmp", "w") as f:
    f.write("\n".join(lines) + "\n")
os.rename(ready + ".tmp", ready)
while True:
    r, _, _ = select.select(list(socks), [], [])
    for s in r:
        if s.type == socket.SOCK_STREAM:
            c, _ = s.accept()
            c.close()
        else:
            s.recv(64)
        with open(hits, "a") as f:
            f.write(socks[s] + "\n")
