/// TLS settings in engine terms, copied out of `sec_protocol_options_t`.
package struct FlowTLSConfiguration: Sendable {
    /// Wire values (0x0303 = TLS 1.2, 0x0304 = TLS 1.3); nil means the default.
    package var minimumVersion: UInt16?
    package var maximumVersion: UInt16?
    package var applicationProtocols: [String] = []
    /// SNI and the name checked against the certificate (client side).
    package var serverName: String?
    /// Replaces the default verification: gets the presented chain (DER, leaf first) and must
    /// call the completion once with its verdict.
    package var verify: (@Sendable (_ chain: [[UInt8]], _ complete: @escaping @Sendable (Bool) -> Void) -> Void)?
    /// This side's certificates (DER, leaf first) and private key (DER).
    package var certificateChain: [[UInt8]] = []
    package var privateKey: [UInt8]?
    /// Client: false skips server verification. Server: true requires a client certificate.
    package var peerAuthenticationRequired: Bool?
    /// Server, unless a certificate is required: asks for a client certificate, checks one that
    /// is presented (trust store or verify block), and goes on without one.
    package var peerAuthenticationOptional = false
    /// Supplies the client identity (certificates DER, key DER) just before the handshake.
    package var challenge: (@Sendable (_ complete: @escaping @Sendable ((certificates: [[UInt8]], key: [UInt8])?) -> Void) -> Void)?
    /// TLS 1.2 pre-shared keys with their identities (UTF-8).
    package var preSharedKeys: [(key: [UInt8], identity: String)] = []
    /// Offered cipher suites (IANA numbers), in order; empty for the defaults.
    package var cipherSuites: [UInt16] = []
    /// Client: a session may resume one the same peer gave a ticket for (QUIC). Off when the
    /// options say `sec_protocol_options_set_tls_resumption_enabled(false)`.
    package var resumption = true
    /// Server: tickets are issued to clients for later resumption (QUIC). Off when the options
    /// say `sec_protocol_options_set_tls_tickets_enabled(false)`.
    package var tickets = true

    package init() {}

    /// A server that asks for a client certificate without requiring one.
    var asksOptionalClientCertificate: Bool {
        peerAuthenticationOptional && peerAuthenticationRequired != true
    }
}

/// What a completed handshake negotiated.
package struct TLSSessionFacts: Sendable {
    package var negotiatedProtocol: String?
    /// Wire value of the version.
    package var version: UInt16?
    /// The peer's certificates (DER, leaf first) as far as they are known.
    package var peerCertificates: [[UInt8]]
    package var serverName: String?
    /// The negotiated suite's IANA number, when the stack reports it.
    package var cipherSuite: UInt16? = nil
    /// The session resumed an earlier one (a ticket), without a full handshake.
    package var resumed = false
    /// Early data (0-RTT) was sent and accepted (client), or accepted (server).
    package var earlyDataAccepted = false
}

/// Security-framework status codes the engine reports in `.tls` errors.
package enum TLSStatus {
    package static let protocolError: Int32 = -9800  // errSSLProtocol
    package static let closedGraceful: Int32 = -9805  // errSSLClosedGraceful
    package static let closedAbort: Int32 = -9806  // errSSLClosedAbort
    package static let negotiation: Int32 = -9802  // errSSLNegotiation
    package static let certificateChainInvalid: Int32 = -9807  // errSSLXCertChainInvalid
    package static let badCertificate: Int32 = -9808  // errSSLBadCert
    package static let unknownRootCertificate: Int32 = -9812  // errSSLUnknownRootCert
    package static let certificateExpired: Int32 = -9814  // errSSLCertExpired
    package static let certificateNotYetValid: Int32 = -9815  // errSSLCertNotYetValid
    package static let peerHandshakeFailure: Int32 = -9824  // errSSLPeerHandshakeFail
    package static let peerProtocolVersion: Int32 = -9836  // errSSLPeerProtocolVersion
    package static let hostNameMismatch: Int32 = -9843  // errSSLHostNameMismatch
    package static let decryptionFailed: Int32 = -9845  // errSSLDecryptionFail
    package static let peerCertificateRequired: Int32 = -9863  // errSSLCertificateRequired
}
