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
 *
 *   raw-udp-forwarder send-with FEATURES /dev/input/eventN HOST PORT
 *   raw-udp-forwarder receive-with FEATURES ADDRESS PORT NAME
 *       the same forwarder with some of what padbridge must do added, to price each part apart. FEATURES is a
 *       comma-separated list of:
 *         loop  each side waits in epoll_wait (with a timeout, as a loop with timers does) instead of blocking in
 *               read/recv, and reads CLOCK_MONOTONIC once per wake;
 *         seal  every datagram is sealed with ChaCha20-Poly1305 (libsodium's IETF detached calls, padbridge's AEAD:
 *               a 32-byte key both sides are given, a 64-bit counter as nonce and header, a 16-byte tag) and opened
 *               on the other side; one that fails to open is dropped;
 *         ack   (with loop) the receiving side answers each datagram with an acknowledgement of the highest counter
 *               (sealed, with seal), and the sending side's loop reads it: the least a link that loses nothing
 *               sends back for an isolated change.
 *       No handshake (the key is fixed: a price per frame, not a protocol), no resends.
 * Built by scripts/bench-forward at benchmark time (never committed as a binary):
 *   gcc -O2 -Wall -Wextra -o raw-udp-forwarder raw_udp_forwarder.c -lsodium
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
#include <sodium.h>
#include <stdint.h>
#include <sys/epoll.h>
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

/* The sending side's set-up: the destination, the grabbed source, a UDP socket. 0, or 1 (said on stderr). */
static int open_sender(const char *source_path, const char *host, const char *port, struct sockaddr_in *destination,
                       int *source, int *sock) {
    if (parse_address(host, port, destination)) return 1;
    *source = open(source_path, O_RDONLY | O_CLOEXEC);
    if (*source < 0) return fail("open", source_path);
    if (ioctl(*source, EVIOCGRAB, 1) < 0) return fail("EVIOCGRAB", source_path);
    *sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (*sock < 0) return fail("socket", "udp");
    return 0;
}

/* One read(2) of the source: its bytes (> 0), 0 when the source is gone, -1 on an error (said on stderr). */
static ssize_t read_source(int source, const char *source_path, struct input_event *events, size_t size) {
    for (;;) {
        ssize_t n = read(source, events, size);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno == ENODEV) return 0;
        fail("read", source_path);
        return -1;
    }
}

/* Writes whole events (a partial one at the end is left out: uinput rejects it). 0, or 1 (said on stderr). */
static int write_events(int uinput, const unsigned char *bytes, ssize_t length) {
    length -= length % (ssize_t)sizeof(struct input_event);
    for (ssize_t done = 0; done < length;) {
        ssize_t w = write(uinput, bytes + done, (size_t)(length - done));
        if (w < 0) {
            if (errno == EINTR) continue;
            return fail("write", "/dev/uinput");
        }
        done += w;
    }
    return 0;
}

static int send_side(const char *source_path, const char *host, const char *port) {
    struct sockaddr_in destination;
    int source, sock;
    if (open_sender(source_path, host, port, &destination, &source, &sock)) return 1;

    struct input_event events[64];
    for (;;) {
        ssize_t n = read_source(source, source_path, events, sizeof events);
        if (n <= 0) return n < 0;
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

/* The receiving side's set-up: a UDP socket bound to ADDRESS PORT, the uinput pad. 0, or 1 (said on stderr). */
static int open_receiver(const char *host, const char *port, const char *name, int *sock, int *uinput) {
    struct sockaddr_in local;
    if (parse_address(host, port, &local)) return 1;
    *sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (*sock < 0) return fail("socket", "udp");
    if (bind(*sock, (struct sockaddr *)&local, sizeof local) < 0) return fail("bind", host);
    *uinput = create_pad(name);
    return *uinput < 0;
}

static int receive_side(const char *host, const char *port, const char *name) {
    int sock, uinput;
    if (open_receiver(host, port, name, &sock, &uinput)) return 1;

    struct input_event events[64];
    for (;;) {
        ssize_t n = recv(sock, events, sizeof events, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("recv", host);
        }
        if (write_events(uinput, (const unsigned char *)events, n)) return 1;
    }
}

/* ---- The forwarder with features (send-with / receive-with) ---- */

enum { FEATURE_LOOP = 1, FEATURE_SEAL = 2, FEATURE_ACK = 4 };
enum { COUNTER_BYTES = 8, TAG_BYTES = crypto_aead_chacha20poly1305_IETF_ABYTES };

static int parse_features(const char *list) {
    int features = 0;
    char copy[64];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *word = strtok_r(copy, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
        if (strcmp(word, "loop") == 0) features |= FEATURE_LOOP;
        else if (strcmp(word, "seal") == 0) features |= FEATURE_SEAL;
        else if (strcmp(word, "ack") == 0) features |= FEATURE_ACK;
        else {
            fprintf(stderr, "raw-udp-forwarder: unknown feature %s (loop, seal, ack)\n", word);
            return -1;
        }
    }
    if ((features & FEATURE_ACK) && !(features & FEATURE_LOOP)) {
        fprintf(stderr, "raw-udp-forwarder: ack needs loop (the sender reads acknowledgements in its loop)\n");
        return -1;
    }
    return features;
}

/* The benchmark's fixed key: both sides are given it, nothing is negotiated. */
static const unsigned char bench_key[crypto_aead_chacha20poly1305_IETF_KEYBYTES] = {
    0x70, 0x61, 0x64, 0x62, 0x72, 0x69, 0x64, 0x67, 0x65, 0x20, 0x62, 0x65, 0x6e, 0x63, 0x68, 0x20,
    0x6b, 0x65, 0x79, 0x20, 0x6f, 0x6e, 0x6c, 0x79, 0x20, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21, 0x21};

static void nonce_for(uint64_t counter, unsigned char nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES]) {
    memset(nonce, 0, crypto_aead_chacha20poly1305_IETF_NPUBBYTES);
    memcpy(nonce + 4, &counter, sizeof counter);
}

/* [counter (8)] [payload] [tag (16) with seal]: returns the datagram's length. */
static size_t frame_datagram(int features, uint64_t counter, const void *payload, size_t length, unsigned char *out) {
    memcpy(out, &counter, COUNTER_BYTES);
    memcpy(out + COUNTER_BYTES, payload, length);
    if (!(features & FEATURE_SEAL)) return COUNTER_BYTES + length;
    unsigned char nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
    nonce_for(counter, nonce);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(out + COUNTER_BYTES, out + COUNTER_BYTES + length, NULL,
                                                       out + COUNTER_BYTES, length, out, COUNTER_BYTES, NULL, nonce,
                                                       bench_key);
    return COUNTER_BYTES + length + TAG_BYTES;
}

/* Opens a datagram in place: the payload's length, or -1 when it is short or does not open. */
static ssize_t open_datagram(int features, unsigned char *datagram, size_t length, uint64_t *counter) {
    size_t overhead = COUNTER_BYTES + ((features & FEATURE_SEAL) ? TAG_BYTES : 0);
    if (length < overhead) return -1;
    memcpy(counter, datagram, COUNTER_BYTES);
    size_t payload = length - overhead;
    if (!(features & FEATURE_SEAL)) return (ssize_t)payload;
    unsigned char nonce[crypto_aead_chacha20poly1305_IETF_NPUBBYTES];
    nonce_for(*counter, nonce);
    if (crypto_aead_chacha20poly1305_ietf_decrypt_detached(datagram + COUNTER_BYTES, NULL, datagram + COUNTER_BYTES,
                                                           payload, datagram + COUNTER_BYTES + payload, datagram,
                                                           COUNTER_BYTES, nonce, bench_key) != 0)
        return -1;
    return (ssize_t)payload;
}

/* With `loop`, one epoll wait (100 ms timeout, as a loop with timers has one) and one clock read per wake. */
static int wait_readable(int features, int epoll, int *ready_fd) {
    if (!(features & FEATURE_LOOP)) return 0;
    struct epoll_event event;
    for (;;) {
        int n = epoll_wait(epoll, &event, 1, 100);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail("epoll_wait", ""), -1;
        if (n == 0) continue;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        *ready_fd = event.data.fd;
        return 0;
    }
}

static int watch(int epoll, int fd) {
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

static int send_with(int features, const char *source_path, const char *host, const char *port) {
    struct sockaddr_in destination;
    int source, sock;
    if (open_sender(source_path, host, port, &destination, &source, &sock)) return 1;
    if (connect(sock, (struct sockaddr *)&destination, sizeof destination) < 0) return fail("connect", host);
    int epoll = -1;
    if (features & FEATURE_LOOP) {
        epoll = epoll_create1(EPOLL_CLOEXEC);
        if (epoll < 0 || watch(epoll, source) < 0 || ((features & FEATURE_ACK) && watch(epoll, sock) < 0))
            return fail("epoll", "set-up");
    }
    struct input_event events[64];
    unsigned char datagram[sizeof events + COUNTER_BYTES + TAG_BYTES];
    uint64_t counter = 0, acknowledged = 0;
    for (;;) {
        int ready = source;
        if (wait_readable(features, epoll, &ready) < 0) return 1;
        if (ready == sock) { /* an acknowledgement */
            ssize_t n = recv(sock, datagram, sizeof datagram, MSG_DONTWAIT);
            uint64_t highest;
            if (n >= 0 && open_datagram(features, datagram, (size_t)n, &highest) >= 0 && highest > acknowledged)
                acknowledged = highest;
            continue;
        }
        ssize_t n = read_source(source, source_path, events, sizeof events);
        if (n <= 0) return n < 0;
        size_t length = frame_datagram(features, ++counter, events, (size_t)n, datagram);
        if (send(sock, datagram, length, 0) < 0 && errno != ENOBUFS && errno != ECONNREFUSED && errno != EAGAIN)
            return fail("send", host);
    }
}

static int receive_with(int features, const char *host, const char *port, const char *name) {
    int sock, uinput;
    if (open_receiver(host, port, name, &sock, &uinput)) return 1;
    int epoll = -1;
    if (features & FEATURE_LOOP) {
        epoll = epoll_create1(EPOLL_CLOEXEC);
        if (epoll < 0 || watch(epoll, sock) < 0) return fail("epoll", "set-up");
    }
    unsigned char datagram[64 * sizeof(struct input_event) + COUNTER_BYTES + TAG_BYTES];
    unsigned char answer[COUNTER_BYTES + COUNTER_BYTES + TAG_BYTES];
    uint64_t highest = 0, answers = 0;
    for (;;) {
        int ready = sock;
        if (wait_readable(features, epoll, &ready) < 0) return 1;
        struct sockaddr_in sender;
        socklen_t sender_length = sizeof sender;
        ssize_t n = recvfrom(sock, datagram, sizeof datagram, 0, (struct sockaddr *)&sender, &sender_length);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail("recvfrom", host);
        }
        uint64_t counter;
        ssize_t payload = open_datagram(features, datagram, (size_t)n, &counter);
        if (payload < 0) continue;
        if (write_events(uinput, datagram + COUNTER_BYTES, payload)) return 1;
        if (counter > highest) highest = counter;
        if (features & FEATURE_ACK) {
            size_t length = frame_datagram(features, ++answers, &highest, sizeof highest, answer);
            if (sendto(sock, answer, length, 0, (struct sockaddr *)&sender, sender_length) < 0 && errno != ENOBUFS
                && errno != ECONNREFUSED && errno != EAGAIN)
                return fail("sendto", "acknowledgement");
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
    if (argc == 6 && (strcmp(argv[1], "send-with") == 0 || strcmp(argv[1], "receive-with") == 0)) {
        int features = parse_features(argv[2]);
        if (features < 0) return 2;
        if (sodium_init() < 0) {
            fprintf(stderr, "raw-udp-forwarder: libsodium failed to initialise\n");
            return 1;
        }
        return argv[1][0] == 's' ? send_with(features, argv[3], argv[4], argv[5])
                                 : receive_with(features, argv[3], argv[4], argv[5]);
    }
    if (argc == 6 && strcmp(argv[1], "pace") == 0)
        return pace(argv[2], atoi(argv[3]), atol(argv[4]), atol(argv[5]));
    fprintf(stderr,
            "usage: %s send /dev/input/eventN HOST PORT\n       %s receive ADDRESS PORT NAME\n"
            "       %s send-with loop,seal,ack /dev/input/eventN HOST PORT\n"
            "       %s receive-with loop,seal,ack ADDRESS PORT NAME\n"
            "       %s pace uinput|hidg FD COUNT FIRST_INDEX\n",
            argv[0], argv[0], argv[0], argv[0], argv[0]);
    return 2;
}
