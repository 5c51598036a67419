/*
 * C baseline client, non-blocking sockets + epoll (level-triggered), one thread.
 *   rr    --conns N --size 64   every connection keeps one request in flight; on each complete response
 *                               the next request is written at once
 *   bulk  --size 65536          write chunks while the socket takes them (EPOLLOUT when full) until the
 *                               duration is over, shutdown(SHUT_WR), wait for the sink's byte count
 *   mem   --conns N --nports K  open N idle connections (non-blocking connects, at most 256 in flight),
 *                               each registered for EPOLLIN; value = RSS delta / N
 * (UDP has no epoll variant: a loopback UDP send never waits, so epoll adds nothing to client_blocking.)
 */
#include "common.h"
#include <signal.h>
#include <sys/epoll.h>

static const char *IMPL = "c-epoll";

static int tcp_connect_blocking(const char *host, int port) {
    struct sockaddr_in a = make_addr(host, port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) DIE("socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) DIE("connect %s:%d", host, port);
    set_nodelay(fd);
    set_nonblock(fd);
    return fd;
}

struct rrconn { int fd; int have; };

static void run_rr(struct opts o) {
    int n = o.conns, ep = epoll_create1(0);
    struct rrconn *cs = calloc((size_t)n, sizeof *cs);
    char *req = malloc((size_t)o.size), *resp = malloc((size_t)o.size);
    memset(req, 'x', (size_t)o.size);
    for (int i = 0; i < n; i++) {
        cs[i].fd = tcp_connect_blocking(o.host, o.port + i % o.nports);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    double start = now_s(), warm_end = start + o.warmup, end = warm_end + o.duration;
    double t0 = 0, t1 = 0, u0 = 0, s0 = 0, u1 = 0, s1 = 0;
    long ops = 0, ops0 = 0;
    int warmed = 0, active = n, stopping = 0;
    for (int i = 0; i < n; i++) if (write(cs[i].fd, req, (size_t)o.size) != o.size) DIE("write");
    struct epoll_event evs[256];
    while (active > 0) {
        int k = epoll_wait(ep, evs, 256, -1);
        if (k < 0) { if (errno == EINTR) continue; DIE("epoll_wait"); }
        for (int e = 0; e < k; e++) {
            struct rrconn *c = &cs[evs[e].data.u32];
            ssize_t r = read(c->fd, resp, (size_t)(o.size - c->have));
            if (r < 0) { if (errno == EAGAIN) continue; DIE("read"); }
            if (r == 0) DIE("EOF");
            c->have += (int)r;
            if (c->have < o.size) continue;
            c->have = 0;
            if (stopping) { active--; epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL); continue; }
            ops++;
            if (write(c->fd, req, (size_t)o.size) != o.size) DIE("write");
        }
        double t = now_s();
        if (!warmed && t >= warm_end) { warmed = 1; t0 = t; ops0 = ops; cpu_times(&u0, &s0); }
        if (!stopping && t >= end) { t1 = t; stopping = 1; cpu_times(&u1, &s1); }
    }
    double secs = t1 - t0;
    char name[32];
    snprintf(name, sizeof name, "rr%d", n);
    emit(IMPL, o.name ? o.name : name, (double)(ops - ops0) / secs, "ops/s", (double)(ops - ops0), secs, u1 - u0, s1 - s0, NULL);
}

static void run_bulk(struct opts o) {
    int fd = tcp_connect_blocking(o.host, o.port + 100), ep = epoll_create1(0);
    size_t sz = (size_t)o.size;
    char *chunk = malloc(sz);
    memset(chunk, 'b', sz);
    struct epoll_event ev = {.events = EPOLLOUT, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    double u0, s0, u1, s1;
    cpu_times(&u0, &s0);
    double t0 = now_s(), end = t0 + o.duration;
    uint64_t sent = 0;
    size_t off = 0; /* bytes of the current chunk already written */
    int done = 0;
    while (!done) {
        struct epoll_event e;
        int k = epoll_wait(ep, &e, 1, -1);
        if (k < 0) { if (errno == EINTR) continue; DIE("epoll_wait"); }
        for (;;) {
            ssize_t w = write(fd, chunk + off, sz - off);
            if (w < 0) { if (errno == EAGAIN) break; DIE("write"); }
            sent += (uint64_t)w;
            off += (size_t)w;
            if (off == sz) {
                off = 0;
                if (now_s() >= end) { done = 1; break; }
            }
        }
    }
    shutdown(fd, SHUT_WR);
    int fl = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    uint64_t got = 0;
    read_all(fd, (char *)&got, 8);
    double secs = now_s() - t0;
    cpu_times(&u1, &s1);
    if (got != sent) fprintf(stderr, "bulk: sent %llu but sink counted %llu\n", (unsigned long long)sent, (unsigned long long)got);
    emit(IMPL, o.name ? o.name : "bulk", (double)got / secs / 1048576.0, "MiB/s", (double)got, secs, u1 - u0, s1 - s0, NULL);
}

static void run_mem(struct opts o) {
    raise_nofile();
    int ep = epoll_create1(0);
    int warm = tcp_connect_blocking(o.host, o.port);
    (void)warm;
    usleep(200000);
    long rss0 = rss_bytes(), heap0 = heap_bytes();
    int *fds = calloc((size_t)o.conns, sizeof *fds);
    double t0 = now_s();
    int started = 0, connected = 0, inflight = 0;
    struct epoll_event evs[256];
    while (connected < o.conns) {
        while (started < o.conns && inflight < 256) {
            struct sockaddr_in a = make_addr(o.host, o.port + started % o.nports);
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (fd < 0) DIE("socket");
            set_nodelay(fd);
            if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) DIE("connect");
            struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = (uint32_t)started};
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
            fds[started++] = fd;
            inflight++;
        }
        int k = epoll_wait(ep, evs, 256, -1);
        for (int e = 0; e < k; e++) {
            int fd = fds[evs[e].data.u32];
            int err = 0;
            socklen_t len = sizeof err;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err) { errno = err; DIE("connect"); }
            struct epoll_event ev = {.events = EPOLLIN, .data.u32 = evs[e].data.u32};
            epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev); /* idle: wait for data */
            inflight--;
            connected++;
        }
    }
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
    else if (!strcmp(o.scenario, "mem")) run_mem(o);
    else DIE("unknown scenario %s", o.scenario);
    return 0;
}
