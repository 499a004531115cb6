#!/usr/bin/env bash
# Go: a module built, tested (go test -race needs more address space, so
# not here), vetted and run with the default policy; GOCACHE and GOPATH land
# under HOME (the run's own, so each run starts with an empty build cache);
# goroutines, os.MkdirTemp under TMPDIR, os/exec.
. "$(dirname "$0")/lib.sh"
need go golang-go
R=$(mkroot)
mkdir -p "$R/m"
cat > "$R/m/go.mod" <<'G'
module example.com/m

go 1.18
G
cat > "$R/m/main.go" <<'G'
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

func Sum(n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	t := 0
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); mu.Lock(); t += i; mu.Unlock() }(i)
	}
	wg.Wait()
	return t
}

func main() {
	d, err := os.MkdirTemp("", "go")
	if err != nil || !strings.HasPrefix(d, os.Getenv("TMPDIR")) {
		fmt.Println("tmp:", d, err)
		os.Exit(1)
	}
	out, err := exec.Command("sh", "-c", "echo sub").Output()
	fmt.Println(Sum(1000), strings.TrimSpace(string(out)), err)
}
G
cat > "$R/m/main_test.go" <<'G'
package main

import "testing"

func TestSum(t *testing.T) {
	if Sum(100) != 5050 {
		t.Fatal("sum")
	}
}

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Sum(10)
	}
}
G
give "$R"
inside() { "$C" run --root "$R/m" --timeout 240 --cpu 240 "$@"; }

expect_eq "go build && run (1000 goroutines, MkdirTemp, exec)" "500500 sub <nil>" "$(inside -- sh -c 'go build -o app . && ./app' 2>&1)"
step "go test -count=1 -bench . -benchtime 100x" inside -- go test -count=1 -bench . -benchtime 100x ./...
step "go vet" inside -- go vet ./...
step "GOCACHE under HOME (the run's own), filled by a build" inside -- sh -c 'go build -o app . && test -d "$(go env GOCACHE)" && case "$(go env GOCACHE)" in "$HOME"/*) ;; *) exit 1;; esac'
expect_eq "no Go cache left in the root" "" "$(ls -A "$R/m" | grep -E '^\.(cache|config)$')"
finish
