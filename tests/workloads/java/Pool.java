// SPDX-License-Identifier: GPL-3.0-or-later
//
// A Java program: a pool of 8 threads runs 32 tasks of a hot loop (long Pool.work(int)),
// which now and then throws and catches an exception. Prints "pool N" and exits 0.
// tests/e2e/test_runtimes.c compiles it with javac and runs it with the recipe the README
// gives for Java.
//   java -cp DIR Pool [ITERATIONS]
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class Pool {
    static long work(int n) {
        long x = 0;
        for (int i = 0; i < n; i++) {
            x += (long) i * 2654435761L;
            if ((i & 0xfffff) == 0) {
                try {
                    if (x % 3 == 1)
                        throw new IllegalStateException("odd");
                } catch (IllegalStateException e) {
                    x ^= e.getMessage().length();
                }
            }
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 50_000_000;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Long>> results = new ArrayList<>();
        for (int i = 0; i < 32; i++)
            results.add(pool.submit(() -> work(n)));
        long sum = 0;
        for (Future<Long> f : results)
            sum += f.get();
        pool.shutdown();
        System.out.println("pool " + Math.floorMod(sum, 1000));
    }
}
