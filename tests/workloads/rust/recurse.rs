// SPDX-License-Identifier: GPL-3.0-or-later
//
// A Rust program: four threads spawned by std::thread recurse 20 to 23 frames deep into a
// hot loop, then sort; the main thread (under std::rt::lang_start) does the same 20 deep.
// Built by the machine's Rust toolchains (rustc -O -g), which may link with LLD.
// Prints "recurse N" and exits 0. tests/e2e/test_runtimes.c builds and runs it.
//   recurse [ROUNDS]
// std::hint::black_box is newer than Debian's rustc (1.63).
fn black_box<T: Copy>(x: T) -> T {
    unsafe { std::ptr::read_volatile(&x) }
}

#[inline(never)]
fn hot(n: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..n {
        x = x.wrapping_add(black_box(i).wrapping_mul(2654435761));
    }
    x
}

#[inline(never)]
fn recurse(d: u32, n: u64) -> u64 {
    if d == 0 {
        let mut v: Vec<u64> = (0..20000).map(|i| (i * 7919) % 10007).collect();
        v.sort();
        hot(n) + v[0]
    } else {
        black_box(recurse(d - 1, n)) + 1
    }
}

fn main() {
    let rounds: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let hs: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut s = 0;
                for _ in 0..rounds {
                    s += recurse(20 + t, 2_000_000);
                }
                s
            })
        })
        .collect();
    let mut tot = 0;
    for _ in 0..rounds / 4 {
        tot += recurse(20, 2_000_000);
    }
    for h in hs {
        tot += h.join().unwrap();
    }
    println!("recurse {}", tot % 1000);
}
