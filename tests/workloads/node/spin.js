// SPDX-License-Identifier: GPL-3.0-or-later
//
// A Node.js program: outer() calls work(), a hot loop, 20 times. Prints "spin N".
// tests/e2e/test_runtimes.c runs it with the recipe the README gives for Node.
//   node --perf-basic-prof --interpreted-frames-native-stack spin.js [N]
function work(n) {
    let x = 0;
    for (let i = 0; i < n; i++)
        x = (x + i * 2654435761) % 1000003;
    return x;
}

function outer(n) {
    let s = 0;
    for (let r = 0; r < 20; r++)
        s += work(n);
    return s;
}

console.log("spin", outer(Number(process.argv[2] || 5e6)));
