// ngtcp2 with its GnuTLS crypto backend, for QUIC. Debian: libngtcp2-dev, libngtcp2-crypto-gnutls-dev.
// ngtcp2's public functions are macros over versioned entry points (the struct versions baked in
// at compile time); Swift cannot call macros, so the wrappers below pass the same versions.
#if __has_include(<ngtcp2/ngtcp2.h>) && __has_include(<ngtcp2/ngtcp2_crypto_gnutls.h>)
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#else
#error "ngtcp2/ngtcp2.h not found. The Network package needs Debian/Ubuntu's libngtcp2-dev and libngtcp2-crypto-gnutls-dev (QUIC); install the system packages it needs with: apt-get install pkg-config libgnutls28-dev duktape-dev libngtcp2-dev libngtcp2-crypto-gnutls-dev"
#endif

static inline int cngtcp2_conn_client_new(
    ngtcp2_conn **pconn, const ngtcp2_cid *dcid, const ngtcp2_cid *scid, const ngtcp2_path *path,
    uint32_t version, const ngtcp2_callbacks *callbacks, const ngtcp2_settings *settings,
    const ngtcp2_transport_params *params, void *user_data) {
    return ngtcp2_conn_client_new(pconn, dcid, scid, path, version, callbacks, settings, params, NULL, user_data);
}

static inline int cngtcp2_conn_server_new(
    ngtcp2_conn **pconn, const ngtcp2_cid *dcid, const ngtcp2_cid *scid, const ngtcp2_path *path,
    uint32_t version, const ngtcp2_callbacks *callbacks, const ngtcp2_settings *settings,
    const ngtcp2_transport_params *params, void *user_data) {
    return ngtcp2_conn_server_new(pconn, dcid, scid, path, version, callbacks, settings, params, NULL, user_data);
}

static inline void cngtcp2_settings_default(ngtcp2_settings *settings) {
    ngtcp2_settings_default(settings);
}

static inline void cngtcp2_transport_params_default(ngtcp2_transport_params *params) {
    ngtcp2_transport_params_default(params);
}

/* `ecn`: the packet's ECN codepoint as it arrived (the IP header's two low TOS bits). */
static inline int cngtcp2_conn_read_pkt(
    ngtcp2_conn *conn, const ngtcp2_path *path, uint8_t ecn, const uint8_t *pkt, size_t pktlen, ngtcp2_tstamp ts) {
    ngtcp2_pkt_info pi = {0};
    pi.ecn = ecn;
    return ngtcp2_conn_read_pkt(conn, path, &pi, pkt, pktlen, ts);
}

/* The writers set `*ecn` to the codepoint the packet must leave with. */
static inline ngtcp2_ssize cngtcp2_conn_writev_stream(
    ngtcp2_conn *conn, uint8_t *ecn, uint8_t *dest, size_t destlen, ngtcp2_ssize *pdatalen, uint32_t flags,
    int64_t stream_id, const ngtcp2_vec *datav, size_t datavcnt, ngtcp2_tstamp ts) {
    ngtcp2_pkt_info pi = {0};
    ngtcp2_ssize written = ngtcp2_conn_writev_stream(conn, NULL, &pi, dest, destlen, pdatalen, flags, stream_id, datav, datavcnt, ts);
    *ecn = pi.ecn;
    return written;
}

static inline ngtcp2_ssize cngtcp2_conn_write_connection_close(
    ngtcp2_conn *conn, uint8_t *ecn, uint8_t *dest, size_t destlen, const ngtcp2_connection_close_error *ccerr, ngtcp2_tstamp ts) {
    ngtcp2_pkt_info pi = {0};
    ngtcp2_ssize written = ngtcp2_conn_write_connection_close(conn, NULL, &pi, dest, destlen, ccerr, ts);
    *ecn = pi.ecn;
    return written;
}

static inline ngtcp2_ssize cngtcp2_conn_writev_datagram(
    ngtcp2_conn *conn, uint8_t *ecn, uint8_t *dest, size_t destlen, int *paccepted, uint32_t flags, uint64_t dgram_id,
    const ngtcp2_vec *datav, size_t datavcnt, ngtcp2_tstamp ts) {
    ngtcp2_pkt_info pi = {0};
    ngtcp2_ssize written = ngtcp2_conn_writev_datagram(conn, NULL, &pi, dest, destlen, paccepted, flags, dgram_id, datav, datavcnt, ts);
    *ecn = pi.ecn;
    return written;
}

static inline void cngtcp2_conn_set_early_remote_transport_params(
    ngtcp2_conn *conn, const ngtcp2_transport_params *params) {
    ngtcp2_conn_set_early_remote_transport_params(conn, params);
}
