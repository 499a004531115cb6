#!/usr/bin/env bash
# Java: compile and run a program with threads and temp files. Needs
# --memory 8G (or --memory 3G with -Xmx512m): HotSpot reserves a 1 GiB
# compressed class space, a code cache and a heap of 1/4 of physical RAM up
# front, so under the default 1G address-space limit the JVM cannot start
# ("Could not allocate compressed class space", or pthread_create EAGAIN for
# its GC threads).
. "$(dirname "$0")/lib.sh"
need java default-jdk-headless
need javac default-jdk-headless
R=$(mkroot)
cat > "$R/Main.java" <<'J'
import java.nio.file.*;
import java.util.concurrent.*;

public class Main {
	public static void main(String[] a) throws Exception {
		ExecutorService ex = Executors.newFixedThreadPool(16);
		Future<Integer>[] f = new Future[100];
		for (int i = 0; i < 100; i++) {
			final int n = i;
			f[i] = ex.submit(() -> n);
		}
		int s = 0;
		for (Future<Integer> x : f)
			s += x.get();
		ex.shutdown();
		Path t = Files.createTempFile("j", ".txt");
		Files.writeString(t, "hi");
		boolean inTmp = t.startsWith(System.getenv("TMPDIR"));
		Process p = new ProcessBuilder("sh", "-c", "exit 3").start();
		System.out.println(s + " " + Files.readString(t) + " " + inTmp + " " + p.waitFor());
	}
}
J
give "$R"
inside() { "$C" run --root "$R" --timeout 240 --cpu 240 "$@"; }
# The JVM reads java.io.tmpdir from its own default (/tmp), not TMPDIR.
expect_eq "java Main.java (source launcher) with --memory 8G" "4950 hi true 3" \
	"$(inside --memory 8G -- sh -c 'java -Djava.io.tmpdir="$TMPDIR" Main.java 2>/dev/null')"
expect_eq "javac, then java -Xmx512m with --memory 3G" "4950 hi true 3" \
	"$(inside --memory 8G -- javac -d out Main.java 2>/dev/null
	   inside --memory 3G -- sh -c 'java -Xmx512m -Djava.io.tmpdir="$TMPDIR" -cp out Main' 2>&1)"
finish
