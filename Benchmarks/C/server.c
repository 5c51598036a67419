/*
 * The one server every client talks to: single-threaded, epoll, level-triggered, non-blocking.
 *
 *   echo  TCP  ports BASE .. BASE+NPORTS-1  echoes every byte back (round trips, idle connections)
 *   sink  TCP  port  BASE+100               discards; on EOF writes the byte count (8 bytes, LE) and closes
 *   udp   UDP  port  BASE+200               counts datagrams (recvmmsg); with --udp-gro 1 the socket
 *                                           has UDP_GRO on, so a sender's UDP_SEGMENT batch arrives as
 *                                           one message (counted as its segments), as a QUIC server's would
 *   stats TCP  port  BASE+201               on accept writes "udp_datagrams N udp_bytes M\n" and closes
 *
 * usage: server [--port BASE] [--nports NPORTS] [--udp-gro 0|1]
 */
#include "common.h"
#include <signal.h>
#include <sys/epoll.h>

enum kind { K_NONE, K_ECHO_LISTEN, K_SINK_LISTEN, K_STATS_LISTEN, K_UDP, K_ECHO, K_SINK };

struct conn {
    unsigned char kind;
    unsigned char want_out; /* EPOLLOUT armed */
    uint32_t pend_off, pend_len;
    char *pend;             /* unsent echo bytes (rare) */
    uint64_t count;         /* sink byte count */
};

static struct conn *conns;
static long maxfd;
static int ep;
static uint64_t udp_datagrams, udp_bytes;
static int udp_gro;

static void add_fd(int fd, enum kind k, uint32_t events) {
    if (fd >= maxfd) DIE("fd %d beyond table", fd);
    memset(&conns[fd], 0, sizeof conns[fd]);
    conns[fd].kind = (unsigned char)k;
    struct epoll_event ev = {.events = events, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) DIE("epoll_ctl add");
}

static void close_fd(int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    free(conns[fd].pend);
    memset(&conns[fd], 0, sizeof conns[fd]);
    close(fd);
}

static void set_events(int fd, uint32_t events) {
    struct epoll_event ev = {.events = events, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static char buf[256 * 1024];

static void on_echo(int fd, uint32_t events) {
    struct conn *c = &conns[fd];
    if (c->pend_len) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
        ssize_t w = write(fd, c->pend + c->pend_off, c->pend_len);
        if (w < 0) { if (errno == EAGAIN) return; close_fd(fd); return; }
        c->pend_off += (uint32_t)w; c->pend_len -= (uint32_t)w;
        if (c->pend_len) return;
        free(c->pend); c->pend = NULL; c->pend_off = 0;
        set_events(fd, EPOLLIN);
        return;
    }
    ssize_t r = read(fd, buf, 64 * 1024);
    if (r < 0) { if (errno == EAGAIN || errno == EINTR) return; close_fd(fd); return; }
    if (r == 0) { close_fd(fd); return; }
    ssize_t w = write(fd, buf, (size_t)r);
    if (w < 0) { if (errno != EAGAIN) { close_fd(fd); return; } w = 0; }
    if (w < r) {
        c->pend = malloc((size_t)(r - w));
        memcpy(c->pend, buf + w, (size_t)(r - w));
        c->pend_off = 0; c->pend_len = (uint32_t)(r - w);
        set_events(fd, EPOLLOUT); /* stop reading until drained */
    }
}

static void on_sink(int fd) {
    struct conn *c = &conns[fd];
    for (int i = 0; i < 64; i++) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0) { if (errno == EAGAIN || errno == EINTR) return; close_fd(fd); return; }
        if (r == 0) {
            uint64_t n = c->count; /* little-endian on x86-64 / aarch64 */
            int fl = fcntl(fd, F_GETFL, 0);
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
            write_all(fd, (const char *)&n, 8);
            close_fd(fd);
            return;
        }
        c->count += (uint64_t)r;
        if ((size_t)r < sizeof buf) return;
    }
}

static void on_udp(int fd) {
    /* With UDP_GRO, one message can carry up to 64 KiB of equal-sized datagrams. */
    enum { N = 64, SZ = 2048, NG = 16, SZG = 65536 };
    static char bufs[N][SZ];
    static char gro_bufs[NG][SZG];
    static union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control[N];
    static struct iovec iov[N];
    static struct mmsghdr msgs[N];
    int count = udp_gro ? NG : N;
    for (int round = 0; round < 16; round++) {
        for (int i = 0; i < count; i++) {
            iov[i].iov_base = udp_gro ? gro_bufs[i] : bufs[i];
            iov[i].iov_len = udp_gro ? SZG : SZ;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i]; msgs[i].msg_hdr.msg_iovlen = 1;
            if (udp_gro) {
                msgs[i].msg_hdr.msg_control = control[i].buf;
                msgs[i].msg_hdr.msg_controllen = sizeof control[i].buf;
            }
        }
        int n = recvmmsg(fd, msgs, (unsigned)count, MSG_DONTWAIT, NULL);
        if (n <= 0) return;
        for (int i = 0; i < n; i++) {
            uint64_t len = msgs[i].msg_len, segments = 1;
            if (udp_gro) {
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
                    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
                        int segment = 0;
                        memcpy(&segment, CMSG_DATA(c), sizeof segment);
                        if (segment > 0) segments = (len + (uint64_t)segment - 1) / (uint64_t)segment;
                    }
                }
            }
            udp_datagrams += segments;
            udp_bytes += len;
        }
        if (n < count) return;
    }
}

static void on_accept(int lfd, enum kind k) {
    for (int i = 0; i < 256; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) return;
        if (k == K_STATS_LISTEN) {
            char line[128];
            int n = snprintf(line, sizeof line, "udp_datagrams %llu udp_bytes %llu\n",
                             (unsigned long long)udp_datagrams, (unsigned long long)udp_bytes);
            int fl = fcntl(fd, F_GETFL, 0);
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
            write_all(fd, line, (size_t)n);
            close(fd);
            continue;
        }
        set_nodelay(fd);
        add_fd(fd, k == K_ECHO_LISTEN ? K_ECHO : K_SINK, EPOLLIN);
    }
}

int main(int argc, char **argv) {
    int base = 19000, nports = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port")) base = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--nports")) nports = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--udp-gro")) udp_gro = atoi(argv[i + 1]);
    }
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    maxfd = (long)rl.rlim_cur + 16;
    conns = calloc((size_t)maxfd, sizeof *conns);
    ep = epoll_create1(0);

    for (int i = 0; i < nports; i++) add_fd(tcp_listen(base + i), K_ECHO_LISTEN, EPOLLIN);
    add_fd(tcp_listen(base + 100), K_SINK_LISTEN, EPOLLIN);
    add_fd(tcp_listen(base + 201), K_STATS_LISTEN, EPOLLIN);

    int u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int rcv = 4 << 20;
    setsockopt(u, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    if (udp_gro) {
        int one = 1;
        if (setsockopt(u, SOL_UDP, UDP_GRO, &one, sizeof one) < 0) DIE("UDP_GRO");
    }
    struct sockaddr_in ua = make_addr("0.0.0.0", base + 200);
    if (bind(u, (struct sockaddr *)&ua, sizeof ua) < 0) DIE("bind udp");
    add_fd(u, K_UDP, EPOLLIN);

    fprintf(stderr, "server: echo %d..%d sink %d udp %d stats %d\n", base, base + nports - 1, base + 100,
            base + 200, base + 201);
    printf("ready\n");
    fflush(stdout);

    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) { if (errno == EINTR) continue; DIE("epoll_wait"); }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            switch (conns[fd].kind) {
            case K_ECHO_LISTEN: on_accept(fd, K_ECHO_LISTEN); break;
            case K_SINK_LISTEN: on_accept(fd, K_SINK_LISTEN); break;
            case K_STATS_LISTEN: on_accept(fd, K_STATS_LISTEN); break;
            case K_UDP: on_udp(fd); break;
            case K_ECHO: on_echo(fd, evs[i].events); break;
            case K_SINK: on_sink(fd); break;
            default: break;
            }
        }
    }
}
