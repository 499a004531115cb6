#!/usr/bin/env bash
# Data plumbing: sort of a 50 MB file with a small buffer (temporary files
# in TMPDIR), sort --parallel, uniq/join/awk/sed over it, tar+gzip/xz
# round trips, split/cat, find and du over /usr, xargs -P, md5sum.
. "$(dirname "$0")/lib.sh"
need sort coreutils
need tar
need xz xz-utils
R=$(mkroot)
give "$R"
inside() { "$C" run --root "$R" --timeout 240 --cpu 240 "$@"; }

step "generate 50 MB" inside -- sh -c 'head -c 24000000 /dev/urandom | od -An -tx4 -w8 -v | tr -d " " > big.txt && test $(stat -c %s big.txt) -ge 50000000'
step "sort -S 2M (spills to TMPDIR), sort -c" inside -- sh -ec \
	'sort -S 2M big.txt > sorted.txt; sort -c sorted.txt; test $(wc -l < sorted.txt) = $(wc -l < big.txt)'
step "sort --parallel=4 -u, uniq -c, join, awk, sed" inside -- sh -ec '
	sort --parallel=4 -S 8M -u big.txt | uniq -c | awk "{n += \$1} END {exit n < 3000000}"
	head -1000 sorted.txt | sed "s/\$/ a/" > j1; head -1000 sorted.txt | sed "s/\$/ b/" > j2
	join j1 j2 | wc -l | grep -qx 1000'
step "tar czf / xzf round trip, xz -T2, md5sum -c" inside -- sh -ec '
	md5sum big.txt sorted.txt > sums; tar czf a.tgz big.txt sorted.txt; mkdir out; tar xzf a.tgz -C out
	(cd out && md5sum -c --quiet ../sums); xz -T2 -1 -k sorted.txt; xz -t sorted.txt.xz; rm -r out a.tgz'
step "split, cat, cmp" inside -- sh -ec 'split -b 7M big.txt part.; cat part.* | cmp - big.txt; rm part.*'
step "find /usr -name *.h, du -s /usr/share/doc, xargs -P4" inside -- sh -ec '
	test $(find /usr/include -name "*.h" | wc -l) -gt 100; du -s /usr/share/doc >/dev/null
	find /usr/include -name "*.h" | head -400 | xargs -P4 -n50 wc -l >/dev/null'
finish
