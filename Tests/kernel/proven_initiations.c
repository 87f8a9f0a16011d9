/*
 * Link initiations from one address that proved it with the host's cookie, for the kernel suite's IPv6 test
 * (Tests/kernel/test_link_corrections.py): what a neighbour who knows the host's public key (it is not secret) can
 * send to use up its own source's share of the handshakes a host under load answers.
 *
 *   proven-initiations SOURCE HOST PORT HOSTKEY RATE
 *     SOURCE    the address to send from (an IPv6 link-local address with its interface: fe80::bad%pbf)
 *     HOST      the host's address (fe80::2%pbf), PORT its link port
 *     HOSTKEY   the host's public key, 64 hex digits
 *     RATE      initiations a second, in 1 ms ticks, until SIGTERM or SIGINT
 *
 * Every initiation is new (random sender index and handshake) with a valid mac1 (LinkInitiationMACs); once the
 * host, under load, sends a cookie reply, every later one carries a valid mac2 made with that cookie, so the host
 * counts it against this source's share (HandshakeAdmission.admitsProvenSource). A newer cookie reply (the host's
 * secret changed) replaces the cookie. Prints "proving from ADDRESS" once its socket is ready, "cookie" when the
 * first cookie arrived, and at the end "sent N initiations, P with a cookie". Built on the host by
 * scripts/kernel-suite (gcc ... -lsodium). Exit status: 0 when it ran, 1 on an error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#define INITIATION_LENGTH 173 /* LinkDatagram.initiationSize */
#define MAC1_OFFSET 109       /* LinkInitiationMACs.mac1Offset */
#define MAC2_OFFSET 141       /* LinkInitiationMACs.mac2Offset */
#define COOKIE_REPLY_LENGTH 65 /* LinkDatagram.cookieReplySize: 0x04 | u32 index | nonce (12) | sealed cookie (48) */
#define REMEMBERED 4096       /* initiations whose mac1 a cookie reply may answer */

static volatile sig_atomic_t stopping;
static void stop(int signal_number) { (void)signal_number; stopping = 1; }

static int resolve(const char *text, const char *port, struct sockaddr_storage *address, socklen_t *length) {
    struct addrinfo hints = {.ai_family = AF_INET6, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *list = NULL;
    int status = getaddrinfo(text, port, &hints, &list);
    if (status != 0) {
        fprintf(stderr, "proven-initiations: %s: %s\n", text, gai_strerror(status));
        return -1;
    }
    memcpy(address, list->ai_addr, list->ai_addrlen);
    *length = list->ai_addrlen;
    freeaddrinfo(list);
    return 0;
}

static void derive(const char *label, const unsigned char host_key[32], unsigned char out[32]) {
    crypto_hash_sha256_state hash;
    crypto_hash_sha256_init(&hash);
    crypto_hash_sha256_update(&hash, (const unsigned char *)label, strlen(label));
    crypto_hash_sha256_update(&hash, host_key, 32);
    crypto_hash_sha256_final(&hash, out);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: proven-initiations SOURCE HOST PORT HOSTKEY RATE\n");
        return 2;
    }
    if (sodium_init() < 0) {
        fprintf(stderr, "proven-initiations: libsodium did not initialise\n");
        return 1;
    }
    unsigned char host_key[32];
    size_t decoded = 0;
    if (strlen(argv[4]) != 64 || sodium_hex2bin(host_key, 32, argv[4], 64, NULL, &decoded, NULL) != 0 || decoded != 32) {
        fprintf(stderr, "proven-initiations: HOSTKEY must be 64 hex digits\n");
        return 2;
    }
    double rate = atof(argv[5]);
    if (rate <= 0) return 2;
    unsigned char mac1_key[32], cookie_key[32];
    derive("padbridge link 6 mac1", host_key, mac1_key);
    derive("padbridge link 6 cookie", host_key, cookie_key);

    struct sockaddr_storage source, target;
    socklen_t source_length, target_length;
    if (resolve(argv[1], "0", &source, &source_length) != 0 || resolve(argv[2], argv[3], &target, &target_length) != 0)
        return 2;
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&source, source_length) != 0 ||
        connect(fd, (struct sockaddr *)&target, target_length) != 0) {
        fprintf(stderr, "proven-initiations: socket from %s to %s: %s\n", argv[1], argv[2], strerror(errno));
        return 1;
    }
    struct sigaction action = {.sa_handler = stop};
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    printf("proving from %s\n", argv[1]);
    fflush(stdout);

    static unsigned char sent_mac1[REMEMBERED][32]; /* by sender index % REMEMBERED */
    static uint32_t sent_index[REMEMBERED];
    unsigned char cookie[32];
    int have_cookie = 0;
    unsigned long long sent = 0, proven = 0;
    struct timespec tick;
    clock_gettime(CLOCK_MONOTONIC, &tick);
    double owed = 0;
    while (!stopping) {
        unsigned char reply[256];
        ssize_t got;
        while ((got = recv(fd, reply, sizeof reply, 0)) > 0) {
            if (got != COOKIE_REPLY_LENGTH || reply[0] != 0x04) continue;
            uint32_t index = (uint32_t)reply[1] | (uint32_t)reply[2] << 8 | (uint32_t)reply[3] << 16 |
                             (uint32_t)reply[4] << 24;
            size_t slot = index % REMEMBERED;
            unsigned long long opened_length = 0;
            if (sent_index[slot] != index ||
                crypto_aead_chacha20poly1305_ietf_decrypt(cookie, &opened_length, NULL, reply + 17, 48,
                                                          sent_mac1[slot], 32, reply + 5, cookie_key) != 0 ||
                opened_length != 32)
                continue;
            if (!have_cookie) {
                printf("cookie\n");
                fflush(stdout);
            }
            have_cookie = 1;
        }
        tick.tv_nsec += 1000000;
        if (tick.tv_nsec >= 1000000000) {
            tick.tv_sec += 1;
            tick.tv_nsec -= 1000000000;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
        owed += rate / 1000.0;
        for (; owed >= 1 && !stopping; owed -= 1) {
            unsigned char initiation[INITIATION_LENGTH];
            initiation[0] = 0x01;
            randombytes_buf(initiation + 1, MAC1_OFFSET - 1);
            crypto_auth_hmacsha256(initiation + MAC1_OFFSET, initiation, MAC1_OFFSET, mac1_key);
            if (have_cookie) {
                crypto_auth_hmacsha256_state state;
                crypto_auth_hmacsha256_init(&state, cookie, sizeof cookie);
                crypto_auth_hmacsha256_update(&state, initiation, MAC2_OFFSET);
                crypto_auth_hmacsha256_final(&state, initiation + MAC2_OFFSET);
            } else {
                memset(initiation + MAC2_OFFSET, 0, 32);
            }
            uint32_t index = (uint32_t)initiation[1] | (uint32_t)initiation[2] << 8 | (uint32_t)initiation[3] << 16 |
                             (uint32_t)initiation[4] << 24;
            sent_index[index % REMEMBERED] = index;
            memcpy(sent_mac1[index % REMEMBERED], initiation + MAC1_OFFSET, 32);
            if (send(fd, initiation, sizeof initiation, 0) == (ssize_t)sizeof initiation) {
                sent++;
                proven += (unsigned long long)have_cookie;
            }
        }
    }
    printf("sent %llu initiations, %llu with a cookie\n", sent, proven);
    return 0;
}
