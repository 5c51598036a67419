import NIOSSL

/// The security layer a listener set up for an inbound flow: an accepted TLS connection's server
/// handler (its handshake runs when the flow is started), or a DTLS peer's session. One optional
/// field for all of them keeps idle flows small.
enum FlowServerSecurity {
    case tls(NIOSSLServerHandler)
    case dtls(GnuTLSSession)
    /// TLS over TCP run by GnuTLS (pre-shared keys); its handshake began at adoption.
    case gnuTLS(GnuTLSStreamHandler)

    var dtls: GnuTLSSession? {
        if case .dtls(let session) = self { return session }
        return nil
    }
}
