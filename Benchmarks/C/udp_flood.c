/*
 * The receive side's sender (udp-offload.sh): floods SIZE-byte datagrams at HOST:PORT as fast as
 * it can, each sendmsg carrying as many datagrams as fit in 64 KiB with a UDP_SEGMENT control
 * message (the kernel cuts them), from a socket bound to HOST:BIND_PORT, so that a receiver can
 * connect to a fixed peer address.
 *
 * It floods for WARMUP + DURATION + TAIL seconds; the value it prints is the datagrams handed to
 * the kernel per second over [WARMUP, WARMUP + DURATION] of its own clock. The tail keeps the
 * flood going while a receiver that started its clock a little later (at its first datagram)
 * finishes its window.
 *
 * usage: udp_flood [--host H] [--port P] [--bind-port Q] [--size B] [--duration S] [--warmup S]
 *                  [--tail S] [--name NAME]
 */
#include "common.h"
#include <signal.h>

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *name = "udp-flood";
    int port = 19000, bind_port = 0, size = 1200;
    double duration = 3.0, warmup = 0.5, tail = 0.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--host")) host = v;
        else if (!strcmp(k, "--port")) port = atoi(v);
        else if (!strcmp(k, "--bind-port")) bind_port = atoi(v);
        else if (!strcmp(k, "--size")) size = atoi(v);
        else if (!strcmp(k, "--duration")) duration = atof(v);
        else if (!strcmp(k, "--warmup")) warmup = atof(v);
        else if (!strcmp(k, "--tail")) tail = atof(v);
        else if (!strcmp(k, "--name")) name = v;
        else DIE("unknown option %s", k);
    }
    if (size < 1 || size > 65507) DIE("bad --size %d", size);
    signal(SIGPIPE, SIG_IGN);

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) DIE("socket");
    if (bind_port > 0) {
        struct sockaddr_in local = make_addr(host, bind_port);
        if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) DIE("bind %s:%d", host, bind_port);
    }
    struct sockaddr_in peer = make_addr(host, port);
    if (connect(fd, (struct sockaddr *)&peer, sizeof peer) < 0) DIE("connect %s:%d", host, port);

    int per_send = segments_per_send(size);
    char *buf = malloc((size_t)size * (size_t)per_send);
    if (!buf) DIE("malloc");
    memset(buf, 'f', (size_t)size * (size_t)per_send);

    double start = now_s(), warm_end = start + warmup, end = warm_end + duration, stop = end + tail;
    double t0 = 0, t1 = 0, u0 = 0, s0 = 0, u1 = 0, s1 = 0;
    long sent = 0, sent0 = 0, sent1 = 0, refused = 0, errors = 0, calls = 0;
    int phase = 0; /* 0 warm-up, 1 measuring, 2 tail */
    for (;;) {
        int r = send_segmented(fd, buf, size, per_send);
        if (r >= 0) {
            sent += r;
            calls++;
        } else if (errno == ECONNREFUSED) {
            /* The receiver is not bound (yet, or any more): an ICMP port unreachable came back. */
            refused++;
        } else if (errno == EAGAIN || errno == ENOBUFS) {
            errors++;
        } else {
            DIE("UDP_SEGMENT send");
        }
        double t = now_s();
        if (phase == 0 && t >= warm_end) { phase = 1; t0 = t; sent0 = sent; cpu_times(&u0, &s0); }
        if (phase == 1 && t >= end) { phase = 2; t1 = t; sent1 = sent; cpu_times(&u1, &s1); }
        if (t >= stop) break;
    }
    double secs = t1 - t0;
    char extra[192];
    snprintf(extra, sizeof extra, "\"sent_total\":%ld,\"sendmsg_calls\":%ld,\"segments_per_send\":%d,\"refused\":%ld,\"errors\":%ld",
             sent, calls, per_send, refused, errors);
    emit("c-gso-flood", name, (double)(sent1 - sent0) / secs, "dgrams/s", (double)(sent1 - sent0), secs,
         u1 - u0, s1 - s0, extra);
    return 0;
}
