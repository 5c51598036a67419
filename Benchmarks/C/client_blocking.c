/*
 * C baseline client, blocking sockets.
 *   rr    --conns N --size 64   N connections; each round writes one request on every connection,
 *                               then reads every response (N round trips per round)
 *   bulk  --size 65536          write() chunks to the sink until the duration is over, shutdown(SHUT_WR),
 *                               wait for the sink's byte count; value = MiB/s
 *   udp   --size B --batch G --batched 0|1|2   connected UDP socket; send() per datagram, one sendmmsg
 *                               of G datagrams, or (2) the G datagrams as sendmsg calls the kernel cuts
 *                               into datagrams (UDP_SEGMENT, at most 64 KiB each); value = datagrams/s
 *                               handed to the kernel
 *   mem   --conns N --nports K  open N idle connections; value = RSS delta / N
 */
#include "common.h"
#include <signal.h>

static const char *IMPL = "c-blocking";

static int tcp_connect(const char *host, int port) {
    struct sockaddr_in a = make_addr(host, port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) DIE("socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) DIE("connect %s:%d", host, port);
    set_nodelay(fd);
    return fd;
}

static void run_rr(struct opts o) {
    int n = o.conns;
    int *fds = calloc((size_t)n, sizeof *fds);
    for (int i = 0; i < n; i++) fds[i] = tcp_connect(o.host, o.port + i % o.nports);
    char *req = calloc(1, (size_t)o.size), *resp = malloc((size_t)o.size);
    memset(req, 'x', (size_t)o.size);
    double start = now_s(), warm_end = start + o.warmup, end = warm_end + o.duration;
    double t0 = 0, t1 = 0, u0 = 0, s0 = 0, u1, s1;
    long ops = 0, ops0 = 0;
    int warmed = 0;
    for (;;) {
        for (int i = 0; i < n; i++) write_all(fds[i], req, (size_t)o.size);
        for (int i = 0; i < n; i++) read_all(fds[i], resp, (size_t)o.size);
        ops += n;
        double t = now_s();
        if (!warmed && t >= warm_end) { warmed = 1; t0 = t; ops0 = ops; cpu_times(&u0, &s0); }
        if (t >= end) { t1 = t; break; }
    }
    cpu_times(&u1, &s1);
    double secs = t1 - t0;
    char name[32];
    snprintf(name, sizeof name, "rr%d", n);
    emit(IMPL, o.name ? o.name : name, (double)(ops - ops0) / secs, "ops/s", (double)(ops - ops0), secs, u1 - u0, s1 - s0, NULL);
}

static void run_bulk(struct opts o) {
    int fd = tcp_connect(o.host, o.port + 100);
    size_t sz = (size_t)o.size;
    char *chunk = malloc(sz);
    memset(chunk, 'b', sz);
    double u0, s0, u1, s1;
    cpu_times(&u0, &s0);
    double t0 = now_s(), end = t0 + o.duration;
    uint64_t sent = 0;
    while (now_s() < end) {
        write_all(fd, chunk, sz);
        sent += sz;
    }
    shutdown(fd, SHUT_WR);
    uint64_t got = 0;
    read_all(fd, (char *)&got, 8);
    double secs = now_s() - t0;
    cpu_times(&u1, &s1);
    if (got != sent) fprintf(stderr, "bulk: sent %llu but sink counted %llu\n", (unsigned long long)sent, (unsigned long long)got);
    emit(IMPL, o.name ? o.name : "bulk", (double)got / secs / 1048576.0, "MiB/s", (double)got, secs, u1 - u0, s1 - s0, NULL);
}

static void run_udp(struct opts o) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = make_addr(o.host, o.port + 200);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) DIE("connect udp");
    int g = o.batch;
    int per_send = segments_per_send(o.size);
    /* One buffer holds a whole segmented send (the other modes use its first datagram). */
    char *dgram = malloc((size_t)o.size * (size_t)per_send);
    memset(dgram, 'u', (size_t)o.size * (size_t)per_send);
    struct iovec iov = {.iov_base = dgram, .iov_len = (size_t)o.size};
    struct mmsghdr *msgs = calloc((size_t)g, sizeof *msgs);
    for (int i = 0; i < g; i++) { msgs[i].msg_hdr.msg_iov = &iov; msgs[i].msg_hdr.msg_iovlen = 1; }
    double start = now_s(), warm_end = start + o.warmup, end = warm_end + o.duration;
    double t0 = 0, t1 = 0, u0 = 0, s0 = 0, u1, s1;
    long sent = 0, sent0 = 0, errors = 0;
    int warmed = 0;
    for (;;) {
        if (o.batched == 2) {
            /* 64 x 1200 B is over 64 KiB: split into sends of at most per_send datagrams. */
            for (int done = 0; done < g;) {
                int n = g - done < per_send ? g - done : per_send;
                int r = send_segmented(fd, dgram, o.size, n);
                if (r < 0) {
                    /* No segmentation offload at all: say so rather than measure nothing. */
                    if (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT) DIE("UDP_SEGMENT send");
                    errors++;
                    break;
                }
                done += r;
                sent += r;
            }
        } else if (o.batched) {
            int done = 0;
            while (done < g) {
                int r = sendmmsg(fd, msgs + done, (unsigned)(g - done), 0);
                if (r < 0) { if (errno == EINTR) continue; errors++; break; }
                done += r;
            }
            sent += done;
        } else {
            for (int i = 0; i < g; i++) {
                if (send(fd, dgram, (size_t)o.size, 0) == o.size) sent++; else errors++;
            }
        }
        double t = now_s();
        if (!warmed && t >= warm_end) { warmed = 1; t0 = t; sent0 = sent; cpu_times(&u0, &s0); }
        if (t >= end) { t1 = t; break; }
    }
    cpu_times(&u1, &s1);
    double secs = t1 - t0;
    char extra[96];
    snprintf(extra, sizeof extra, "\"errors\":%ld,\"sent_total\":%ld", errors, sent);
    emit(IMPL, o.name ? o.name : "udp", (double)(sent - sent0) / secs, "dgrams/s",
         (double)(sent - sent0), secs, u1 - u0, s1 - s0, extra);
}

static void run_mem(struct opts o) {
    raise_nofile();
    int warm = tcp_connect(o.host, o.port); /* warm-up connection, not counted */
    (void)warm;
    usleep(200000);
    long rss0 = rss_bytes(), heap0 = heap_bytes();
    int *fds = calloc((size_t)o.conns, sizeof *fds);
    double t0 = now_s();
    for (int i = 0; i < o.conns; i++) fds[i] = tcp_connect(o.host, o.port + i % o.nports);
    double secs = now_s() - t0;
    usleep(500000);
    long rss1 = rss_bytes(), heap1 = heap_bytes();
    char extra[192];
    snprintf(extra, sizeof extra, "\"rss_before\":%ld,\"rss_after\":%ld,\"connect_seconds\":%.3f,\"heap_per_conn\":%.1f",
             rss0, rss1, secs, (double)(heap1 - heap0) / o.conns);
    emit(IMPL, o.name ? o.name : "mem", (double)(rss1 - rss0) / o.conns, "B/conn", o.conns, secs, 0, 0, extra);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    struct opts o = parse_opts(argc, argv);
    if (!strcmp(o.scenario, "rr")) run_rr(o);
    else if (!strcmp(o.scenario, "bulk")) run_bulk(o);
    else if (!strcmp(o.scenario, "udp")) run_udp(o);
    else if (!strcmp(o.scenario, "mem")) run_mem(o);
    else DIE("unknown scenario %s", o.scenario);
    return 0;
}
