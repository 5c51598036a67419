/*
 * The one TLS server every TLS client talks to: single-threaded, epoll, level-triggered,
 * non-blocking sockets, OpenSSL (libssl). TLS 1.3 only, TLS_AES_128_GCM_SHA256 only, key
 * exchange X25519, the certificate and key given on the command line (the run generates an
 * ECDSA P-256 one). No session tickets and no session cache: every handshake is a full one.
 *
 *   tls   TCP port BASE+300   TLS sink: accepts, completes the handshake, discards application
 *                             data and counts it. A stream's byte 0x00 ends a bulk transfer (the
 *                             clients send 'b' bytes, then one 0x00): the server answers with the
 *                             count of bytes before it (8 bytes, little-endian, one TLS record)
 *                             and keeps the connection open. On close_notify it answers with its
 *                             own close_notify and closes; on EOF or an error it closes.
 *   stats TCP port BASE+301   on accept writes "tls_handshakes N tls_bytes M tls_resumed R\n"
 *                             and closes (plain TCP)
 *
 * usage: tls_server --cert cert.pem --key key.pem [--port BASE]
 */
#include "common.h"
#include <signal.h>
#include <sys/epoll.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

enum kind { K_NONE, K_TLS_LISTEN, K_STATS_LISTEN, K_TLS };

struct conn {
    unsigned char kind;
    unsigned char handshaken;
    unsigned char want_write;  /* the last SSL call wanted EPOLLOUT */
    unsigned char reply_pending; /* a count reply could not be written yet */
    SSL *ssl;
    uint64_t count;            /* application bytes of the current bulk transfer */
    uint64_t reply;
};

static struct conn *conns;
static long maxfd;
static int ep;
static SSL_CTX *ctx;
static uint64_t handshakes, bytes_total, resumed;

static void add_fd(int fd, enum kind k, uint32_t events) {
    if (fd >= maxfd) DIE("fd %d beyond table", fd);
    memset(&conns[fd], 0, sizeof conns[fd]);
    conns[fd].kind = (unsigned char)k;
    struct epoll_event ev = {.events = events, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) DIE("epoll_ctl add");
}

static void set_events(int fd, uint32_t events) {
    struct epoll_event ev = {.events = events, .data.fd = fd};
    epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static void close_fd(int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    if (conns[fd].ssl) SSL_free(conns[fd].ssl);
    memset(&conns[fd], 0, sizeof conns[fd]);
    close(fd);
}

/* Arms EPOLLOUT when OpenSSL waits for the socket to take data, EPOLLIN otherwise. */
static void want(int fd, int write_side) {
    struct conn *c = &conns[fd];
    if (c->want_write == write_side) return;
    c->want_write = (unsigned char)write_side;
    set_events(fd, write_side ? EPOLLOUT : EPOLLIN);
}

/* Returns 1 if the connection is still open, 0 if it was closed. For an SSL call's result <= 0. */
static int handle_ssl_result(int fd, int r) {
    struct conn *c = &conns[fd];
    int e = SSL_get_error(c->ssl, r);
    switch (e) {
    case SSL_ERROR_WANT_READ: want(fd, 0); return 1;
    case SSL_ERROR_WANT_WRITE: want(fd, 1); return 1;
    case SSL_ERROR_ZERO_RETURN:
        /* close_notify: answer with ours (best effort) and close */
        SSL_shutdown(c->ssl);
        close_fd(fd);
        return 0;
    default:
        /* EOF without close_notify, reset, protocol error */
        ERR_clear_error();
        close_fd(fd);
        return 0;
    }
}

static char buf[256 * 1024];

static int write_reply(int fd) {
    struct conn *c = &conns[fd];
    uint64_t n = c->reply; /* little-endian on x86-64 / aarch64 */
    ERR_clear_error();
    int w = SSL_write(c->ssl, &n, 8);
    if (w <= 0) { c->reply_pending = 1; return handle_ssl_result(fd, w); }
    c->reply_pending = 0;
    return 1;
}

static void on_tls(int fd) {
    struct conn *c = &conns[fd];
    if (!c->handshaken) {
        ERR_clear_error();
        int r = SSL_do_handshake(c->ssl);
        if (r != 1) { handle_ssl_result(fd, r); return; }
        c->handshaken = 1;
        handshakes++;
        if (SSL_session_reused(c->ssl)) resumed++;
    }
    if (c->reply_pending) {
        if (!write_reply(fd) || c->reply_pending) return;
    }
    want(fd, 0);
    /* Until OpenSSL wants the socket again: records it has already read ahead into its buffer
     * would not wake epoll. */
    for (;;) {
        ERR_clear_error();
        int r = SSL_read(c->ssl, buf, sizeof buf);
        if (r <= 0) { handle_ssl_result(fd, r); return; }
        bytes_total += (uint64_t)r;
        if (buf[r - 1] == 0) {
            /* end of a bulk transfer: the marker is the last byte the client sent */
            c->reply = c->count + (uint64_t)(r - 1);
            c->count = 0;
            if (!write_reply(fd) || c->reply_pending) return;
        } else {
            c->count += (uint64_t)r;
        }
    }
}

static void on_accept(int lfd, enum kind k) {
    for (int i = 0; i < 256; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) return;
        if (k == K_STATS_LISTEN) {
            char line[160];
            int n = snprintf(line, sizeof line, "tls_handshakes %llu tls_bytes %llu tls_resumed %llu\n",
                             (unsigned long long)handshakes, (unsigned long long)bytes_total,
                             (unsigned long long)resumed);
            int fl = fcntl(fd, F_GETFL, 0);
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
            write_all(fd, line, (size_t)n);
            close(fd);
            continue;
        }
        set_nodelay(fd);
        add_fd(fd, K_TLS, EPOLLIN);
        SSL *ssl = SSL_new(ctx);
        if (!ssl) DIE("SSL_new");
        SSL_set_fd(ssl, fd);
        SSL_set_accept_state(ssl);
        conns[fd].ssl = ssl;
        on_tls(fd); /* the ClientHello is often there already */
    }
}

int main(int argc, char **argv) {
    int base = 19000;
    const char *cert = NULL, *key = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port")) base = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--cert")) cert = argv[i + 1];
        else if (!strcmp(argv[i], "--key")) key = argv[i + 1];
        else DIE("unknown option %s", argv[i]);
    }
    if (!cert || !key) DIE("usage: tls_server --cert cert.pem --key key.pem [--port BASE]");
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    maxfd = (long)rl.rlim_cur + 16;
    conns = calloc((size_t)maxfd, sizeof *conns);
    ep = epoll_create1(0);

    ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) DIE("SSL_CTX_new");
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    if (SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") != 1) DIE("ciphersuites");
    if (SSL_CTX_set1_groups_list(ctx, "X25519") != 1) DIE("groups");
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) { ERR_print_errors_fp(stderr); DIE("certificate %s", cert); }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) { ERR_print_errors_fp(stderr); DIE("key %s", key); }
    if (SSL_CTX_check_private_key(ctx) != 1) DIE("key does not match the certificate");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_read_ahead(ctx, 1); /* one read() per burst of records instead of two per record */
    SSL_CTX_set_default_read_buffer_len(ctx, 64 * 1024);
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);

    add_fd(tcp_listen(base + 300), K_TLS_LISTEN, EPOLLIN);
    add_fd(tcp_listen(base + 301), K_STATS_LISTEN, EPOLLIN);

    fprintf(stderr, "tls_server: tls %d stats %d (%s)\n", base + 300, base + 301, OpenSSL_version(OPENSSL_VERSION));
    printf("ready\n");
    fflush(stdout);

    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) { if (errno == EINTR) continue; DIE("epoll_wait"); }
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            switch (conns[fd].kind) {
            case K_TLS_LISTEN: on_accept(fd, K_TLS_LISTEN); break;
            case K_STATS_LISTEN: on_accept(fd, K_STATS_LISTEN); break;
            case K_TLS: on_tls(fd); break;
            default: break;
            }
        }
    }
}
