/*
 * The raw floor of the remap latency benchmark: the least a user-space forwarder can do.
 *
 * Opens an evdev source, grabs it (EVIOCGRAB), creates a uinput device with the source's key and
 * absolute-axis capabilities (ranges, fuzz and flat copied with EVIOCGABS), then copies `struct input_event`
 * bytes from the source fd to the uinput fd in a blocking read/write loop. No parsing, no remapping, one
 * thread, no timers: whatever latency and CPU this costs, no forwarder can cost less.
 *
 * Built by scripts/bench-remap at benchmark time (never committed as a binary):
 *   gcc -O2 -Wall -Wextra -o raw-forwarder raw_forwarder.c
 * Usage: raw-forwarder /dev/input/eventN NAME [--keys]
 * --keys: the floor of a forwarder onto a keyboard (the `padbridge-keys` row's): a uinput keyboard (KEY_ESC...
 * KEY_MICMUTE, as padbridge's virtual keyboard has them), the source's BTN_SOUTH written as KEY_SPACE, every other
 * key and axis dropped; still no parsing beyond that one comparison.
 * Exit status: 0 when the source goes away (ENODEV), 1 on any other error (message on stderr). SIGTERM ends
 * it; the kernel destroys the uinput device when its fd closes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BITS_PER_LONG (8 * sizeof(unsigned long))
#define NLONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)

static int test_bit(const unsigned long *bits, unsigned bit) {
    return (bits[bit / BITS_PER_LONG] >> (bit % BITS_PER_LONG)) & 1UL;
}

static int fail(const char *what, const char *path) {
    fprintf(stderr, "raw-forwarder: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

static int copy_capabilities(int source, int uinput, const char *source_path) {
    unsigned long keys[NLONGS(KEY_CNT)] = {0}, axes[NLONGS(ABS_CNT)] = {0};
    if (ioctl(source, EVIOCGBIT(EV_KEY, sizeof keys), keys) < 0) return fail("EVIOCGBIT(EV_KEY)", source_path);
    if (ioctl(source, EVIOCGBIT(EV_ABS, sizeof axes), axes) < 0) return fail("EVIOCGBIT(EV_ABS)", source_path);

    if (ioctl(uinput, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(uinput, UI_SET_EVBIT, EV_ABS) < 0)
        return fail("UI_SET_EVBIT", "/dev/uinput");
    for (unsigned code = 0; code < KEY_CNT; code++)
        if (test_bit(keys, code) && ioctl(uinput, UI_SET_KEYBIT, code) < 0) return fail("UI_SET_KEYBIT", "/dev/uinput");
    for (unsigned code = 0; code < ABS_CNT; code++) {
        if (!test_bit(axes, code)) continue;
        struct uinput_abs_setup setup = {.code = code};
        if (ioctl(source, EVIOCGABS(code), &setup.absinfo) < 0) return fail("EVIOCGABS", source_path);
        if (ioctl(uinput, UI_SET_ABSBIT, code) < 0 || ioctl(uinput, UI_ABS_SETUP, &setup) < 0)
            return fail("UI_ABS_SETUP", "/dev/uinput");
    }
    return 0;
}

static int keyboard_capabilities(int uinput) {
    if (ioctl(uinput, UI_SET_EVBIT, EV_KEY) < 0) return fail("UI_SET_EVBIT", "/dev/uinput");
    for (unsigned code = KEY_ESC; code <= KEY_MICMUTE; code++)
        if (ioctl(uinput, UI_SET_KEYBIT, code) < 0) return fail("UI_SET_KEYBIT", "/dev/uinput");
    return 0;
}

/* --keys: keeps BTN_SOUTH (as KEY_SPACE) and SYN_REPORT, drops the rest; returns the bytes kept. */
static ssize_t as_keys(struct input_event *events, ssize_t bytes) {
    size_t kept = 0, count = (size_t)bytes / sizeof *events;
    for (size_t i = 0; i < count; i++) {
        if (events[i].type == EV_KEY && events[i].code == BTN_SOUTH) {
            events[kept] = events[i];
            events[kept++].code = KEY_SPACE;
        } else if (events[i].type == EV_SYN && events[i].code == SYN_REPORT && kept > 0) {
            events[kept++] = events[i];
        }
    }
    return (ssize_t)(kept * sizeof *events);
}

int main(int argc, char **argv) {
    int keys = argc == 4 && strcmp(argv[3], "--keys") == 0;
    if (argc != 3 && !keys) {
        fprintf(stderr, "usage: %s /dev/input/eventN NAME [--keys]\n", argv[0]);
        return 2;
    }
    const char *source_path = argv[1], *name = argv[2];

    int source = open(source_path, O_RDONLY | O_CLOEXEC);
    if (source < 0) return fail("open", source_path);
    if (ioctl(source, EVIOCGRAB, 1) < 0) return fail("EVIOCGRAB", source_path);

    int uinput = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (uinput < 0) return fail("open (modprobe uinput?)", "/dev/uinput");
    if (keys ? keyboard_capabilities(uinput) : copy_capabilities(source, uinput, source_path)) return 1;

    struct uinput_setup setup = {.id = {.bustype = BUS_VIRTUAL, .vendor = 0x1209, .product = 0x0bf0, .version = 1}};
    snprintf(setup.name, sizeof setup.name, "%s", name);
    if (ioctl(uinput, UI_DEV_SETUP, &setup) < 0) return fail("UI_DEV_SETUP", "/dev/uinput");
    if (ioctl(uinput, UI_DEV_CREATE) < 0) return fail("UI_DEV_CREATE", "/dev/uinput");

    struct input_event events[64];
    for (;;) {
        ssize_t n = read(source, events, sizeof events);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENODEV) return 0;
            return fail("read", source_path);
        }
        if (n == 0) return 0;
        if (keys && (n = as_keys(events, n)) == 0) continue;
        /* evdev returns whole events; uinput takes whole events. One write per read, as the kernel batched them. */
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(uinput, (const char *)events + done, (size_t)(n - done));
            if (w < 0) {
                if (errno == EINTR) continue;
                return fail("write", "/dev/uinput");
            }
            done += w;
        }
    }
}
