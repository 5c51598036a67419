/* Shared helpers for the C baseline programs (gcc -O2, Linux only). */
#ifndef NETBENCH_COMMON_H
#define NETBENCH_COMMON_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fprintf(stderr, " (errno %d: %s)\n", errno, strerror(errno)); exit(1); } while (0)

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static inline long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

/* Bytes handed out by malloc (glibc mallinfo2: all arenas + mmapped chunks). */
static inline long heap_bytes(void) {
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

static inline void cpu_times(double *user, double *sys) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
    *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static inline void set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static inline void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static inline struct sockaddr_in make_addr(const char *host, int port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) DIE("bad IPv4 address %s", host);
    return a;
}

/* A non-blocking TCP listener on every address (used by the echo/sink and TLS servers). */
static inline int tcp_listen(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = make_addr("0.0.0.0", port);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) DIE("bind tcp %d", port);
    if (listen(fd, 4096) < 0) DIE("listen");
    return fd;
}

/* Options shared by the clients; parsed from --key value pairs. */
struct opts {
    const char *scenario; /* rr, bulk, udp, mem */
    const char *host;
    int port;             /* first port */
    int nports;           /* connections are spread over port .. port+nports-1 */
    int conns;
    double duration;
    double warmup;
    int size;             /* message / datagram size */
    int batch;            /* datagrams per group */
    int batched;          /* 0 = one send per datagram, 1 = one sendmmsg per group, 2 = UDP_SEGMENT sends */
    const char *name;     /* scenario name to print */
};

static inline struct opts parse_opts(int argc, char **argv) {
    struct opts o = {"rr", "127.0.0.1", 19000, 1, 1, 3.0, 0.5, 64, 64, 0, NULL};
    if (argc < 2) DIE("usage: %s rr|bulk|udp|mem [--host H --port P --nports K --conns N --duration S --warmup S --size B --batch G --batched 0|1|2 --name NAME]", argv[0]);
    o.scenario = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--host")) o.host = v;
        else if (!strcmp(k, "--port")) o.port = atoi(v);
        else if (!strcmp(k, "--nports")) o.nports = atoi(v);
        else if (!strcmp(k, "--conns")) o.conns = atoi(v);
        else if (!strcmp(k, "--duration")) o.duration = atof(v);
        else if (!strcmp(k, "--warmup")) o.warmup = atof(v);
        else if (!strcmp(k, "--size")) o.size = atoi(v);
        else if (!strcmp(k, "--batch")) o.batch = atoi(v);
        else if (!strcmp(k, "--batched")) o.batched = atoi(v);
        else if (!strcmp(k, "--name")) o.name = v;
        else DIE("unknown option %s", k);
    }
    if (o.nports < 1) o.nports = 1;
    return o;
}

/* One JSON line: the same shape as the Swift executables print. */
static inline void emit(const char *impl, const char *scenario, double value, const char *unit,
                        double ops, double seconds, double cpu_user, double cpu_sys, const char *extra) {
    printf("{\"impl\":\"%s\",\"scenario\":\"%s\",\"value\":%.3f,\"unit\":\"%s\",\"ops\":%.0f,"
           "\"seconds\":%.6f,\"cpu_user\":%.3f,\"cpu_sys\":%.3f%s%s}\n",
           impl, scenario, value, unit, ops, seconds, cpu_user, cpu_sys, extra ? "," : "", extra ? extra : "");
    fflush(stdout);
}

/* Blocking helpers. */
static inline void write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) { if (errno == EINTR) continue; DIE("write"); }
        buf += w; n -= (size_t)w;
    }
}

static inline void read_all(int fd, char *buf, size_t n) {
    while (n > 0) {
        ssize_t r = read(fd, buf, n);
        if (r < 0) { if (errno == EINTR) continue; DIE("read"); }
        if (r == 0) DIE("unexpected EOF");
        buf += r; n -= (size_t)r;
    }
}

/* Sends `count` datagrams of `size` bytes from `buf` as one sendmsg with a UDP_SEGMENT control
 * message: the kernel cuts the send into datagrams (generic segmentation offload). Returns the
 * datagrams sent, or -1. */
static inline int send_segmented(int fd, const char *buf, int size, int count) {
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = (size_t)size * (size_t)count};
    union { char buf[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } control;
    memset(&control, 0, sizeof control);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t segment = (uint16_t)size;
    memcpy(CMSG_DATA(c), &segment, sizeof segment);
    for (;;) {
        ssize_t r = sendmsg(fd, &m, 0);
        if (r >= 0) return (int)(r / size);
        if (errno != EINTR) return -1;
    }
}

/* Datagrams of `size` bytes that fit in one segmented send: an IPv4 UDP payload is at most
 * 65,507 bytes and the kernel takes at most 64 segments (UDP_MAX_SEGMENTS on older kernels). */
static inline int segments_per_send(int size) {
    int n = 65507 / size;
    return n > 64 ? 64 : (n < 1 ? 1 : n);
}

#endif
