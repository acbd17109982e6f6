/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The runner of the minimal Criterion stand-in (tests/arch/mini/criterion/criterion.h):
 * runs every registered test in its own child process (a crash fails that test only),
 * prints one line per test and a Criterion-like synthesis line, and exits 1 if any
 * failed. Used by `make test-aarch64` under qemu-user.
 */
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <unistd.h>

struct mini_test *mini_tests;

int main(void)
{
    int passed = 0, failed = 0;
    for (struct mini_test *t = mini_tests; t != NULL; t = t->next) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            if (t->init != NULL && *t->init != NULL)
                (*t->init)();
            t->fn();
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        int ok = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        printf("[%s] %s::%s\n", ok ? "PASS" : "FAIL", t->suite, t->name);
        if (ok)
            passed++;
        else
            failed++;
    }
    printf("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: 0\n",
           passed + failed, passed, failed);
    return failed == 0 ? 0 : 1;
}
