/*
 * The receive side's C receiver (udp-offload.sh): a UDP socket bound to HOST:PORT, blocking
 * recvmmsg of 64 messages at a time, counting datagrams and bytes.
 *   --gro 0   one datagram per message (2 KiB buffers)
 *   --gro 1   UDP_GRO on: the kernel may hand over several datagrams of one size as one message
 *             (64 KiB buffers), with their size in a UDP_GRO control message; they are counted
 *             as the datagrams they were
 *
 * Prints "ready" once bound, starts its clock at the first datagram, and counts over
 * [first + WARMUP, first + WARMUP + DURATION]; then one JSON line like the clients' (value =
 * datagrams received per second; CPU = this process's user+sys over the same window).
 * The socket keeps the system's default receive buffer (net.core.rmem_default), as the Swift
 * receivers' sockets do.
 *
 * usage: udp_recv [--host H] [--port P] [--duration S] [--warmup S] [--gro 0|1] [--name NAME]
 */
#include "common.h"
#include <signal.h>

enum { N = 64 };

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *name = "udp-recv";
    int port = 19000, gro = 0;
    double duration = 3.0, warmup = 0.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--host")) host = v;
        else if (!strcmp(k, "--port")) port = atoi(v);
        else if (!strcmp(k, "--duration")) duration = atof(v);
        else if (!strcmp(k, "--warmup")) warmup = atof(v);
        else if (!strcmp(k, "--gro")) gro = atoi(v);
        else if (!strcmp(k, "--name")) name = v;
        else DIE("unknown option %s", k);
    }
    signal(SIGPIPE, SIG_IGN);

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) DIE("socket");
    if (gro) {
        int one = 1;
        if (setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) < 0) DIE("UDP_GRO");
    }
    /* A timeout, so that a sender that never comes (or stops early) ends the run instead of hanging it. */
    struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in local = make_addr(host, port);
    if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) DIE("bind %s:%d", host, port);

    size_t sz = gro ? 65536 : 2048;
    char *bufs = malloc(sz * N);
    if (!bufs) DIE("malloc");
    static struct iovec iov[N];
    static struct mmsghdr msgs[N];
    static union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control[N];

    printf("ready\n");
    fflush(stdout);

    double first = 0, warm_end = 0, end = 0, give_up = now_s() + 10;
    double t0 = 0, t1 = 0, u0 = 0, s0 = 0, u1, s1;
    long dgrams = 0, bytes = 0, dgrams0 = 0, bytes0 = 0, calls = 0, calls0 = 0;
    int phase = 0; /* 0 waiting for the first datagram, 1 warm-up, 2 measuring */
    for (;;) {
        for (int i = 0; i < N; i++) {
            iov[i].iov_base = bufs + sz * (size_t)i;
            iov[i].iov_len = sz;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            if (gro) {
                msgs[i].msg_hdr.msg_control = control[i].buf;
                msgs[i].msg_hdr.msg_controllen = sizeof control[i].buf;
            }
        }
        /* Waits for the first message only, then takes what is queued (up to 64). */
        int n = recvmmsg(fd, msgs, N, MSG_WAITFORONE, NULL);
        double t = now_s();
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) DIE("recvmmsg");
            if (phase == 0 && t >= give_up) DIE("no datagram within 10 s");
            if (phase == 2 && t >= end + 2) DIE("the sender stopped before the window ended");
            n = 0;
        }
        calls += n > 0;
        for (int i = 0; i < n; i++) {
            long len = (long)msgs[i].msg_len, count = len > 0 ? 1 : 0;
            if (gro) {
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
                    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                        uint16_t segment = 0;
                        memcpy(&segment, CMSG_DATA(c), sizeof segment);
                        if (segment > 0) count = (len + segment - 1) / segment;
                    }
                }
            }
            dgrams += count;
            bytes += len;
        }
        if (phase == 0 && n > 0) { phase = 1; first = t; warm_end = first + warmup; end = warm_end + duration; }
        if (phase == 1 && t >= warm_end) {
            phase = 2; t0 = t; dgrams0 = dgrams; bytes0 = bytes; calls0 = calls; cpu_times(&u0, &s0);
        }
        if (phase == 2 && t >= end) { t1 = t; break; }
    }
    cpu_times(&u1, &s1);
    double secs = t1 - t0;
    char extra[192];
    snprintf(extra, sizeof extra, "\"bytes\":%ld,\"received_total\":%ld,\"recvmmsg_calls\":%ld,\"gro\":%d",
             bytes - bytes0, dgrams, calls - calls0, gro);
    emit(gro ? "c-recvmmsg-gro" : "c-recvmmsg", name, (double)(dgrams - dgrams0) / secs, "dgrams/s",
         (double)(dgrams - dgrams0), secs, u1 - u0, s1 - s0, extra);
    return 0;
}
