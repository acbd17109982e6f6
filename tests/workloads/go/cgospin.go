// SPDX-License-Identifier: GPL-3.0-or-later
//
// A Go program that calls C through cgo, so dynamically linked and started by the C
// library (LD_PRELOAD applies): four goroutines alternate a Go loop (gospin) and a C loop
// (cspin). Goroutines run on stacks of a few KiB in Go's heap; a profiler's signal lands
// on them. With "pprof" as second argument it also runs Go's own CPU profiler
// (runtime/pprof, SIGPROF) into the file named third. Prints "cgospin ROUNDS SUM" and
// exits 0. tests/e2e/test_runtimes.c builds and runs it.
//   cgospin [ROUNDS] [pprof FILE]
package main

/*
#include <stdint.h>
__attribute__((noinline)) static uint64_t cspin(uint64_t n)
{
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < n; i++)
        x += i * 2654435761u;
    return x;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
)

//go:noinline
func gospin(n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x += uint64(i) * 2654435761
	}
	return x
}

func main() {
	rounds := 20
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 3 && os.Args[2] == "pprof" {
		f, err := os.Create(os.Args[3])
		if err != nil {
			panic(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var wg sync.WaitGroup
	res := make([]uint64, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var s uint64
			for r := 0; r < rounds; r++ {
				s += gospin(2000000)
				s += uint64(C.cspin(2000000))
			}
			res[g] = s
		}(g)
	}
	wg.Wait()
	fmt.Println("cgospin", rounds, res[0]+res[1]+res[2]+res[3])
}
