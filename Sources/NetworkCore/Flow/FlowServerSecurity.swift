import NIOSSL

/// The security layer a listener set up for an accepted TCP connection: its TLS server handler,
/// whose handshake runs when the flow is started. (A DTLS peer's session belongs to its
/// transport, `SharedDatagramPeer`.) One optional field for both kinds keeps idle flows small.
enum FlowServerSecurity {
    case tls(NIOSSLServerHandler)
    /// TLS over TCP run by GnuTLS (pre-shared keys); its handshake began at adoption.
    case gnuTLS(GnuTLSStreamHandler)
}
