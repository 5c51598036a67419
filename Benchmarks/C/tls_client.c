/*
 * C baseline TLS client: OpenSSL (libssl) over blocking sockets, one SSL_CTX for the whole run,
 * no certificate verification (SSL_VERIFY_NONE, as the Swift clients), TLS 1.2 or newer (the
 * server allows TLS 1.3 only), no SNI (the host is an address), no session resumption.
 *
 *   bulk       --size 65536   one connection to the TLS sink (PORT+300): after the handshake,
 *                             SSL_write() chunks of 'b' until the duration is over, then one 0x00
 *                             byte (end of transfer); the sink answers with the count of bytes it
 *                             received before it (8 bytes); value = MiB/s over the time from the
 *                             first write until the count arrived
 *   handshake                 sequential: TCP connect (TCP_NODELAY), SSL_connect, SSL_shutdown
 *                             (sends close_notify without waiting for the server's), close; then
 *                             the next; value = completed handshakes/s over the measured window
 */
#include "common.h"
#include <dirent.h>
#include <signal.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

static const char *IMPL = "c-openssl";

static int tcp_connect(const char *host, int port) {
    struct sockaddr_in a = make_addr(host, port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) DIE("socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) DIE("connect %s:%d", host, port);
    set_nodelay(fd);
    return fd;
}

static SSL_CTX *make_ctx(void) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) DIE("SSL_CTX_new");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return ctx;
}

static SSL *tls_connect(SSL_CTX *ctx, int fd) {
    SSL *ssl = SSL_new(ctx);
    if (!ssl) DIE("SSL_new");
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {
        ERR_print_errors_fp(stderr);
        DIE("SSL_connect");
    }
    return ssl;
}

static void ssl_write_all(SSL *ssl, const char *p, size_t n) {
    while (n > 0) {
        int w = SSL_write(ssl, p, (int)n);
        if (w <= 0) { ERR_print_errors_fp(stderr); DIE("SSL_write"); }
        p += w; n -= (size_t)w;
    }
}

static void ssl_read_all(SSL *ssl, char *p, size_t n) {
    while (n > 0) {
        int r = SSL_read(ssl, p, (int)n);
        if (r <= 0) { ERR_print_errors_fp(stderr); DIE("SSL_read"); }
        p += r; n -= (size_t)r;
    }
}

static void run_bulk(struct opts o) {
    SSL_CTX *ctx = make_ctx();
    int fd = tcp_connect(o.host, o.port + 300);
    SSL *ssl = tls_connect(ctx, fd);
    size_t sz = (size_t)o.size;
    char *chunk = malloc(sz);
    memset(chunk, 'b', sz);
    double u0, s0, u1, s1;
    cpu_times(&u0, &s0);
    double t0 = now_s(), end = t0 + o.duration;
    uint64_t sent = 0;
    while (now_s() < end) {
        ssl_write_all(ssl, chunk, sz);
        sent += sz;
    }
    ssl_write_all(ssl, "", 1); /* the 0x00 end marker */
    uint64_t got = 0;
    ssl_read_all(ssl, (char *)&got, 8);
    double secs = now_s() - t0;
    cpu_times(&u1, &s1);
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
    if (got != sent) fprintf(stderr, "tls-bulk: sent %llu but sink counted %llu\n", (unsigned long long)sent, (unsigned long long)got);
    emit(IMPL, o.name ? o.name : "tls-bulk", (double)got / secs / 1048576.0, "MiB/s", (double)got, secs, u1 - u0, s1 - s0, NULL);
}

/* File descriptors this process has open (entries of /proc/self/fd, less the one reading it). */
static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;
}

static void run_handshake(struct opts o) {
    SSL_CTX *ctx = make_ctx();
    double start = now_s(), warm_end = start + o.warmup, end = warm_end + o.duration;
    double t0 = 0, t1 = 0, u0 = 0, s0 = 0, u1, s1;
    long ops = 0, ops0 = 0;
    int warmed = 0;
    for (;;) {
        int fd = tcp_connect(o.host, o.port + 300);
        SSL *ssl = tls_connect(ctx, fd);
        SSL_shutdown(ssl);
        SSL_free(ssl);
        close(fd);
        ops++;
        double t = now_s();
        if (!warmed && t >= warm_end) { warmed = 1; t0 = t; ops0 = ops; cpu_times(&u0, &s0); }
        if (t >= end) { t1 = t; break; }
    }
    cpu_times(&u1, &s1);
    double secs = t1 - t0;
    char extra[96];
    snprintf(extra, sizeof extra, "\"handshakes_total\":%ld,\"open_fds\":%d", ops, open_fds());
    emit(IMPL, o.name ? o.name : "tls-handshake", (double)(ops - ops0) / secs, "handshakes/s", (double)(ops - ops0), secs,
         u1 - u0, s1 - s0, extra);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    struct opts o = parse_opts(argc, argv);
    if (!strcmp(o.scenario, "bulk")) run_bulk(o);
    else if (!strcmp(o.scenario, "handshake")) run_handshake(o);
    else DIE("unknown scenario %s", o.scenario);
    return 0;
}
