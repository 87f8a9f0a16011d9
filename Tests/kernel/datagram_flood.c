/*
 * A flood of UDP datagrams at a host, for the flood test (Tests/kernel/test_flood.py, which also measures the
 * highest rate it reaches): what someone on the LAN can send.
 *
 *   datagram-flood HOST PORT RATE SECONDS SOURCES KIND...
 *     RATE      datagrams a second (0: as fast as it can), on an absolute CLOCK_MONOTONIC schedule in 1 ms ticks
 *     SECONDS   how long (0: until SIGTERM or SIGINT)
 *     SOURCES   how many sockets (each its own source port) take turns
 *     KIND      random:FIRST:LENGTH  LENGTH random bytes, the first one FIRST (hex), new ones every datagram
 *               file:PATH            the bytes of PATH (a captured datagram, replayed)
 *               initiation:HOSTKEY   a link initiation (173 bytes) for the host whose public key is HOSTKEY (64 hex
 *                                    digits): random sender index and handshake (its ephemeral key a random 32
 *                                    bytes, its sealed static key garbage), mac1 valid for that host (HMAC-SHA256 under
 *                                    SHA-256("padbridge link 6 mac1" | HOSTKEY), LinkInitiationGate), mac2 zero. What
 *                                    anyone who knows the host's key (it is not secret) can make: each one costs the
 *                                    host a Diffie-Hellman before it finds the static key is not a paired one, unless
 *                                    its admission budget asks for a cookie first. New ones every datagram.
 *               several KINDs take turns.
 *
 * Prints "flooding HOST:PORT" once its sockets are ready, and at the end "sent N datagrams in S s: R/s" (datagrams
 * the kernel refused, ENOBUFS or EAGAIN, are not counted). Built on the host by scripts/kernel-suite:
 *   gcc -O2 -Wall -Wextra -o datagram-flood datagram_flood.c -lsodium
 * Exit status: 0 when it ran, 1 on an error (message on stderr), 2 on bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#define MAX_KINDS 8
#define MAX_LENGTH 1400
#define BATCH 64
#define INITIATION_LENGTH 173     /* LinkDatagram.initiationSize: 1 + 4 + 104 + 32 + 32 */
#define MAC1_OFFSET 109           /* LinkInitiationGate.mac1Offset */

struct kind {
    int random;                 /* 1: random bytes after `first`; 0: the file's bytes */
    int initiation;             /* 1: random bytes after `first`, then a valid mac1 under mac1_key and a zero mac2 */
    unsigned char mac1_key[crypto_auth_hmacsha256_KEYBYTES];
    unsigned char first;
    size_t length;
    unsigned char bytes[MAX_LENGTH];
};

static volatile sig_atomic_t stopping;
static void stop(int signal_number) { (void)signal_number; stopping = 1; }

static uint64_t state = 0x9E3779B97F4A7C15u;
static uint64_t next_random(void) {  /* xorshift64*: fast, not for secrets */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Du;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int usage(void) {
    fprintf(stderr, "usage: datagram-flood HOST PORT RATE SECONDS SOURCES random:FIRST:LENGTH|file:PATH|initiation:HOSTKEY...\n");
    return 2;
}

static int parse_kind(const char *text, struct kind *kind) {
    memset(kind, 0, sizeof *kind);
    if (strncmp(text, "random:", 7) == 0) {
        char *end;
        unsigned long first = strtoul(text + 7, &end, 16);
        if (*end != ':' || first > 255) return -1;
        unsigned long length = strtoul(end + 1, &end, 10);
        if (*end != 0 || length < 1 || length > MAX_LENGTH) return -1;
        kind->random = 1;
        kind->first = (unsigned char)first;
        kind->length = length;
        return 0;
    }
    if (strncmp(text, "initiation:", 11) == 0) {
        unsigned char host_key[32];
        size_t decoded = 0;
        if (strlen(text + 11) != 64 ||
            sodium_hex2bin(host_key, sizeof host_key, text + 11, 64, NULL, &decoded, NULL) != 0 || decoded != 32)
            return -1;
        static const char label[] = "padbridge link 6 mac1";
        crypto_hash_sha256_state hash;
        crypto_hash_sha256_init(&hash);
        crypto_hash_sha256_update(&hash, (const unsigned char *)label, sizeof label - 1);
        crypto_hash_sha256_update(&hash, host_key, sizeof host_key);
        crypto_hash_sha256_final(&hash, kind->mac1_key);
        kind->random = kind->initiation = 1;
        kind->first = 0x01;
        kind->length = INITIATION_LENGTH;
        return 0;
    }
    if (strncmp(text, "file:", 5) == 0) {
        FILE *file = fopen(text + 5, "rb");
        if (!file) {
            fprintf(stderr, "datagram-flood: cannot open %s: %s\n", text + 5, strerror(errno));
            return -1;
        }
        kind->length = fread(kind->bytes, 1, MAX_LENGTH, file);
        fclose(file);
        return kind->length > 0 ? 0 : -1;
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc < 7) return usage();
    if (sodium_init() < 0) {
        fprintf(stderr, "datagram-flood: libsodium did not initialise\n");
        return 1;
    }
    struct sockaddr_in target = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2]))};
    if (inet_pton(AF_INET, argv[1], &target.sin_addr) != 1) {
        fprintf(stderr, "datagram-flood: not an IPv4 address: %s\n", argv[1]);
        return 2;
    }
    double rate = atof(argv[3]), seconds = atof(argv[4]);
    int sources = atoi(argv[5]);
    if (rate < 0 || seconds < 0 || sources < 1 || sources > 4096) return usage();
    int kinds_count = argc - 6;
    if (kinds_count > MAX_KINDS) return usage();
    static struct kind kinds[MAX_KINDS];
    for (int index = 0; index < kinds_count; index++) {
        if (parse_kind(argv[6 + index], &kinds[index]) != 0) return usage();
    }
    int *sockets = calloc((size_t)sources, sizeof *sockets);
    for (int index = 0; index < sources; index++) {
        sockets[index] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (sockets[index] < 0 || connect(sockets[index], (struct sockaddr *)&target, sizeof target) < 0) {
            fprintf(stderr, "datagram-flood: socket to %s:%s: %s\n", argv[1], argv[2], strerror(errno));
            return 1;
        }
    }
    state ^= (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
    struct sigaction action = {.sa_handler = stop};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    printf("flooding %s:%s\n", argv[1], argv[2]);
    fflush(stdout);

    static unsigned char buffers[BATCH][MAX_LENGTH];
    struct mmsghdr messages[BATCH];
    struct iovec vectors[BATCH];
    uint64_t sent = 0, turn = 0;
    int64_t start = now_ns(), tick = start;
    double owed = 0;
    while (!stopping) {
        int64_t now = now_ns();
        if (seconds > 0 && now - start >= (int64_t)(seconds * 1e9)) break;
        long due = BATCH;
        if (rate > 0) {
            /* 1 ms ticks on an absolute schedule: what is due by now is sent, then wait for the next tick */
            tick += 1000000;
            struct timespec at = {.tv_sec = tick / 1000000000, .tv_nsec = tick % 1000000000};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
            owed += rate / 1000.0;
            due = (long)owed;
            owed -= (double)due;
        }
        while (due > 0 && !stopping) {
            int count = due > BATCH ? BATCH : (int)due;
            int socket_index = (int)(turn % (uint64_t)sources);
            for (int index = 0; index < count; index++) {
                struct kind *kind = &kinds[(turn + (uint64_t)index) % (uint64_t)kinds_count];
                unsigned char *bytes = buffers[index];
                if (kind->random) {
                    bytes[0] = kind->first;
                    for (size_t offset = 1; offset < kind->length; offset += 8) {
                        uint64_t value = next_random();
                        size_t left = kind->length - offset;
                        memcpy(bytes + offset, &value, left < 8 ? left : 8);
                    }
                    if (kind->initiation) {
                        crypto_auth_hmacsha256(bytes + MAC1_OFFSET, bytes, MAC1_OFFSET, kind->mac1_key);
                        memset(bytes + MAC1_OFFSET + 32, 0, 32);
                    }
                } else {
                    memcpy(bytes, kind->bytes, kind->length);
                }
                vectors[index] = (struct iovec){.iov_base = bytes, .iov_len = kind->length};
                messages[index] = (struct mmsghdr){.msg_hdr = {.msg_iov = &vectors[index], .msg_iovlen = 1}};
            }
            int done = sendmmsg(sockets[socket_index], messages, (unsigned)count, 0);
            if (done < 0) {
                if (errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED && errno != EINTR) {
                    fprintf(stderr, "datagram-flood: sendmmsg: %s\n", strerror(errno));
                    return 1;
                }
                done = 0;
            }
            sent += (uint64_t)done;
            turn += (uint64_t)count;
            due -= count;
            if (rate == 0) break;
        }
    }
    double elapsed = (double)(now_ns() - start) / 1e9;
    printf("sent %llu datagrams in %.2f s: %.0f/s\n", (unsigned long long)sent, elapsed, sent / elapsed);
    return 0;
}
