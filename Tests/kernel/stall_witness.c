/* The kernel suite's witness of a starved machine. It asks to run every PERIOD ms (CLOCK_MONOTONIC, absolute
   deadlines) and prints one line each time it ran THRESHOLD ms or more after it asked to: the monotonic time it ran
   at, and how late, in ms ("12.345678901 412.3"). A test that sees a link counted lost (nothing heard for 400 ms)
   takes it for the machine's doing only when this program, which does nothing else, was kept waiting at the same
   time: an emulated guest on a busy machine stops running its processes for that long, which no real machine does.
   Its first line, "ready", says it runs. Built on the host by scripts/kernel-suite (tools/stall-witness).
   Usage: stall-witness PERIOD_MS THRESHOLD_MS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double milliseconds(struct timespec t) { return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }

int main(int argc, char **argv) {
    if (argc != 3 || atol(argv[1]) <= 0 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: stall-witness PERIOD_MS THRESHOLD_MS\n");
        return 2;
    }
    long period_ns = atol(argv[1]) * 1000000L;
    double threshold_ms = (double)atol(argv[2]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    puts("ready");
    for (;;) {
        next.tv_nsec += period_ns;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec += 1;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double late_ms = milliseconds(now) - milliseconds(next);
        if (late_ms >= threshold_ms) printf("%ld.%09ld %.1f\n", (long)now.tv_sec, now.tv_nsec, late_ms);
        next = now;
    }
}
