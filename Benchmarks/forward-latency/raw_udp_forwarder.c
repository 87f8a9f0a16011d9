/*
 * The floor of the forwarding benchmark: the least a network gamepad forwarder can do.
 *
 *   raw-udp-forwarder send /dev/input/eventN HOST PORT
 *       grabs the evdev source and sends the `struct input_event` bytes of every read(2) as one UDP datagram.
 *   raw-udp-forwarder receive ADDRESS PORT NAME
 *       creates a uinput pad with the benchmark source's capabilities (an Xbox 360 pad's keys and axes, no fuzz)
 *       and writes every datagram's events to it as they arrive.
 *   raw-udp-forwarder pace uinput|hidg FD COUNT FIRST_INDEX
 *       not a forwarder: the benchmark's 1 kHz source. Writes COUNT stick frames to the inherited descriptor FD
 *       (a uinput source: ABS_X + SYN_REPORT; a HID gadget: one report), one every 1 ms on an absolute
 *       CLOCK_MONOTONIC schedule, the values of driver.py's probe sequence from FIRST_INDEX on. Prints the schedule's
 *       start (ns) and how many writes the device refused (a gadget whose previous report was not collected yet).
 *
 * No encryption, no authentication, no redundancy, no acknowledgements, one blocking loop per side: what a lost
 * datagram loses stays lost. Whatever latency and CPU this costs, no forwarder over UDP can cost less.
 * Built by scripts/bench-forward at benchmark time (never committed as a binary):
 *   gcc -O2 -Wall -Wextra -o raw-udp-forwarder raw_udp_forwarder.c
 * Exit status: 0 when the source goes away (ENODEV), 1 on any other error (message on stderr), 2 on bad usage.
 * SIGTERM ends either side; the kernel destroys the uinput pad when its fd closes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "raw-udp-forwarder: %s %s: %s\n", what, detail, strerror(errno));
    return 1;
}

static int parse_address(const char *host, const char *port, struct sockaddr_in *address) {
    memset(address, 0, sizeof *address);
    address->sin_family = AF_INET;
    address->sin_port = htons((unsigned short)atoi(port));
    if (inet_pton(AF_INET, host, &address->sin_addr) != 1) {
        fprintf(stderr, "raw-udp-forwarder: not an IPv4 address: %s\n", host);
        return 1;
    }
    return 0;
}

static int send_side(const char *source_path, const char *host, const char *port) {
    struct sockaddr_in destination;
    if (parse_address(host, port, &destination)) return 1;
    int source = open(source_path, O_RDONLY | O_CLOEXEC);
    if (source < 0) return fail("open", source_path);
    if (ioctl(source, EVIOCGRAB, 1) < 0) return fail("EVIOCGRAB", source_path);
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return fail("socket", "udp");

    struct input_event events[64];
    for (;;) {
        ssize_t n = read(source, events, sizeof events);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENODEV) return 0;
            return fail("read", source_path);
        }
        if (n == 0) return 0;
        /* A full socket buffer or an unreachable host loses the datagram, as UDP does. */
        if (sendto(sock, events, (size_t)n, 0, (struct sockaddr *)&destination, sizeof destination) < 0
            && errno != ENOBUFS && errno != ECONNREFUSED && errno != EAGAIN)
            return fail("sendto", host);
    }
}

/* The benchmark source's capabilities (Benchmarks/remap-latency/driver.py, source_capabilities). */
static int create_pad(const char *name) {
    static const int keys[] = {BTN_A, BTN_B, BTN_X, BTN_Y, BTN_TL, BTN_TR, BTN_SELECT, BTN_START, BTN_MODE,
                               BTN_THUMBL, BTN_THUMBR};
    static const struct { int code, minimum, maximum; } axes[] = {
        {ABS_X, -32768, 32767}, {ABS_Y, -32768, 32767}, {ABS_RX, -32768, 32767}, {ABS_RY, -32768, 32767},
        {ABS_Z, 0, 255}, {ABS_RZ, 0, 255}, {ABS_HAT0X, -1, 1}, {ABS_HAT0Y, -1, 1},
    };
    int uinput = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (uinput < 0) return fail("open (modprobe uinput?)", "/dev/uinput"), -1;
    if (ioctl(uinput, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(uinput, UI_SET_EVBIT, EV_ABS) < 0)
        return fail("UI_SET_EVBIT", "/dev/uinput"), -1;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (ioctl(uinput, UI_SET_KEYBIT, keys[i]) < 0) return fail("UI_SET_KEYBIT", "/dev/uinput"), -1;
    for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++) {
        struct uinput_abs_setup setup = {.code = (unsigned short)axes[i].code,
                                         .absinfo = {.minimum = axes[i].minimum, .maximum = axes[i].maximum}};
        if (ioctl(uinput, UI_SET_ABSBIT, axes[i].code) < 0 || ioctl(uinput, UI_ABS_SETUP, &setup) < 0)
            return fail("UI_ABS_SETUP", "/dev/uinput"), -1;
    }
    struct uinput_setup setup = {.id = {.bustype = BUS_VIRTUAL, .vendor = 0x1209, .product = 0x0bf1, .version = 1}};
    snprintf(setup.name, sizeof setup.name, "%s", name);
    if (ioctl(uinput, UI_DEV_SETUP, &setup) < 0) return fail("UI_DEV_SETUP", "/dev/uinput"), -1;
    if (ioctl(uinput, UI_DEV_CREATE) < 0) return fail("UI_DEV_CREATE", "/dev/uinput"), -1;
    return uinput;
}

static int receive_side(const char *host, const char *port, const char *name) {
    struct sockaddr_in local;
    if (parse_address(host, port, &local)) return 1;
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return fail("socket", "udp");
    if (bind(sock, (struct sockaddr *)&local, sizeof local) < 0) return fail("bind", host);
    int uinput = create_pad(name);
    if (uinput < 0) return 1;

    struct input_event events[64];
    for (;;) {
        ssize_t n = recv(sock, events, sizeof events, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("recv", host);
        }
        n -= n % (ssize_t)sizeof events[0]; /* whole events only: uinput rejects a partial one */
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

/* driver.py's PROBE_STEP and PROBE_SPAN. */
static int probe_value(long index) { return -32000 + (int)((index * 1021L) % 64000L); }

static int pace(const char *format, int fd, long count, long first_index) {
    int gadget = strcmp(format, "hidg") == 0;
    if (!gadget && strcmp(format, "uinput") != 0) {
        fprintf(stderr, "raw-udp-forwarder: pace: format must be uinput or hidg, not %s\n", format);
        return 2;
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    start.tv_nsec += 2000000; /* the first frame 2 ms from now */
    long long start_ns = (long long)start.tv_sec * 1000000000LL + start.tv_nsec;
    long refused = 0;
    for (long i = 0; i < count; i++) {
        long long due = start_ns + i * 1000000LL;
        struct timespec at = {.tv_sec = (time_t)(due / 1000000000LL), .tv_nsec = (long)(due % 1000000000LL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {}
        int value = probe_value(first_index + i);
        ssize_t written;
        if (gadget) {
            unsigned char report[6] = {0, 0, (unsigned char)(value & 0xff), (unsigned char)((value >> 8) & 0xff), 0, 0};
            written = write(fd, report, sizeof report);
        } else {
            struct input_event frame[2] = {{.type = EV_ABS, .code = ABS_X, .value = value},
                                           {.type = EV_SYN, .code = SYN_REPORT, .value = 0}};
            written = write(fd, frame, sizeof frame);
        }
        if (written < 0) {
            if (errno != EAGAIN) return fail("write", "paced source");
            refused++;
        }
    }
    printf("start_ns %lld refused %ld\n", start_ns, refused);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "send") == 0) return send_side(argv[2], argv[3], argv[4]);
    if (argc == 5 && strcmp(argv[1], "receive") == 0) return receive_side(argv[2], argv[3], argv[4]);
    if (argc == 6 && strcmp(argv[1], "pace") == 0)
        return pace(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]));
    fprintf(stderr,
            "usage: %s send /dev/input/eventN HOST PORT\n       %s receive ADDRESS PORT NAME\n"
            "       %s pace uinput|hidg FD COUNT FIRST_INDEX\n",
            argv[0], argv[0], argv[0]);
    return 2;
}
