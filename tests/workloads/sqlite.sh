#!/usr/bin/env bash
# sqlite3 CLI: WAL database, 200k-row import, index, VACUUM (temp files in
# TMPDIR via SQLITE_TMPDIR/TMPDIR), concurrent readers while a writer runs.
. "$(dirname "$0")/lib.sh"
need sqlite3
R=$(mkroot)
give "$R"
inside() { "$C" run --root "$R" --timeout 120 "$@"; }

step "create, WAL, import 200k rows from CSV" inside -- sh -ec '
	seq 1 200000 | awk "{print \$1\",name\"\$1\",\"\$1%97}" > d.csv
	sqlite3 t.db "pragma journal_mode=wal;" "create table t(id integer primary key, name text, k int);" \
		".mode csv" ".import d.csv t"
	test "$(sqlite3 t.db "select count(*) from t")" = 200000'
step "index, group by, temp b-tree sort, VACUUM" inside -- sh -ec '
	sqlite3 t.db "create index tk on t(k);" "select k, count(*) from t group by k order by 2 desc limit 1;" >/dev/null
	sqlite3 t.db "pragma temp_store=file; select name from t order by name desc limit 1;" >/dev/null
	sqlite3 t.db "vacuum;"'
step "writer and 4 concurrent readers" inside -- sh -ec '
	(for i in $(seq 1 50); do sqlite3 -cmd ".timeout 5000" t.db "insert into t(name, k) values (\"w$i\", 1);"; done) &
	for r in 1 2 3 4; do (for i in $(seq 1 20); do sqlite3 -cmd ".timeout 5000" t.db "select count(*) from t" >/dev/null; done) & done
	wait; test "$(sqlite3 t.db "select count(*) from t")" = 200050'
finish
