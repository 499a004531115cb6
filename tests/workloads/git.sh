#!/usr/bin/env bash
# git the way an agent uses it: config --global (writes $HOME: here the
# root, through --env HOME, so the identity lasts from one run to the next;
# by default HOME is the run's own and goes with it),
# init, commits, branches, merge with a conflict resolved, rebase, stash,
# worktree, tags, describe, archive, gc/repack/fsck, clone of a local
# repository, bisect run, log through a pager, hooks, blame, grep.
. "$(dirname "$0")/lib.sh"
need git
R=$(mkroot)
give "$R"
inside() { "$C" run --root "$R" --timeout 120 --env HOME="$R" "$@"; }

step "config --global writes ~/.gitconfig" inside -- sh -c \
	'git config --global user.email a@example.org && git config --global user.name Agent &&
	 git config --global init.defaultBranch main && grep -q Agent "$HOME/.gitconfig"'
step "init, 20 commits, branch, merge conflict resolved" inside -- sh -ec '
	git init -q r && cd r
	for i in $(seq 1 20); do echo "line $i" >> f; git add f; git commit -qm "c$i"; done
	git switch -qc topic; echo topic > g; git add g; sed -i 1s/.*/topic/ f; git commit -qam topic
	git switch -q main; sed -i 1s/.*/main/ f; git commit -qam main
	if git merge -q topic 2>/dev/null; then exit 1; fi
	git checkout --theirs f; git add f; git commit -qm merged
	test "$(git rev-list --count HEAD)" = 23'
step "rebase -i (scripted), stash, cherry-pick, revert" inside -- sh -ec '
	cd r; git switch -qc side HEAD~3; echo s > s; git add s; git commit -qm side
	GIT_SEQUENCE_EDITOR=true git rebase -qi main
	echo dirty >> s; git stash -q; git stash pop -q; git commit -qam dirty
	git cherry-pick -x main~1 >/dev/null 2>&1 || git cherry-pick --skip
	git revert --no-edit HEAD >/dev/null'
step "worktree add/list/remove" inside -- sh -ec '
	cd r; git worktree add -q ../wt topic; test -f ../wt/g; git worktree list | grep -q wt
	git worktree remove ../wt'
step "tag, describe, archive | tar, bundle" inside -- sh -ec '
	cd r; git tag -a v1.0 -m v1.0 main; git describe main | grep -q v1.0
	git archive --format=tar main | tar -t | grep -qx f; git bundle create ../r.bundle --all 2>/dev/null'
step "gc --aggressive, repack, fsck, count-objects, maintenance" inside -- sh -ec '
	cd r; git gc -q --aggressive; git repack -adq; git fsck --no-progress 2>&1; git count-objects -v >/dev/null
	git maintenance run --task=commit-graph'
step "clone (local, --no-local, bare, from bundle), fetch, push to bare" inside -- sh -ec '
	git clone -q r c1; git clone -q --no-local r c2; git clone -q --bare r b.git; git clone -q r.bundle c3
	cd c1; git remote add bare ../b.git; git fetch -q bare; echo p > p; git add p; git commit -qm p
	git push -q bare HEAD:refs/heads/pushed'
step "bisect run" inside -- sh -ec '
	cd r; git bisect start main main~15 >/dev/null; git bisect run sh -c "! grep -q \"line 12\" f" >/dev/null
	git bisect reset >/dev/null 2>&1'
step "hooks (pre-commit, commit-msg) run" inside -- sh -ec '
	cd r; printf "#!/bin/sh\necho hook >> ../hook.log\n" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
	git commit -q --allow-empty -m hooked; grep -q hook ../hook.log'
step "log/blame/grep/shortlog/diff --stat; log with a pager" inside -- sh -ec '
	cd r; git log --oneline --graph --all >/dev/null; git blame f >/dev/null; git grep -q "line 5"
	git shortlog -sn HEAD >/dev/null; git diff --stat HEAD~3 >/dev/null
	GIT_PAGER="less -FRX" git -p log -3 >/dev/null; git -c core.pager=cat log -1 >/dev/null'
step "git status in a 2000-file tree; clean -fdx" inside -- sh -ec '
	cd r; mkdir -p big; for i in $(seq 1 2000); do echo $i > big/f$i; done
	git add big; git commit -qm big; git status --porcelain | wc -l | grep -qx 0
	touch junk; git clean -qfdx; test ! -e junk'
finish
