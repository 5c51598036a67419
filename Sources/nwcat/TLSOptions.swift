import ArgumentParser
import Dispatch
import Foundation
import Network

/// TLS options shared by `connect` and `listen`.
struct TLSOptions: ParsableArguments {
    @Flag(help: "Run TLS over TCP (the server is verified against the system trust store and host name).")
    var tls = false

    @Flag(help: "Run DTLS over UDP (same verification and options as --tls; implies --udp).")
    var dtls = false

    @Flag(help: "QUIC (TLS 1.3 inside; needs --alpn). connect: one bidirectional stream, verified as --tls; listen: each stream a client opens is a connection.")
    var quic = false

    @Flag(help: "connect --quic: carry QUIC datagrams (RFC 9221) instead of a stream; each chunk read from standard input is one datagram, as with --udp.")
    var datagram = false

    /// TLS, DTLS or QUIC is on.
    var secured: Bool { tls || dtls || quic }

    @Option(name: .customLong("alpn"), help: "Offer this ALPN protocol (repeatable).")
    var applicationProtocols: [String] = []

    @Flag(help: "connect: do NOT verify the server (explicitly insecure; for tests only).")
    var insecure = false

    @Option(help: "connect: trust exactly the server certificate with this SHA-256 (hex of its DER), instead of the system trust store.")
    var pin: String?

    @Option(help: "listen: PEM certificate chain file (leaf first). Without --cert/--key, listen --tls makes a self-signed certificate and prints its --pin.")
    var cert: String?

    @Option(help: "listen: PEM private key file (goes with --cert).")
    var key: String?

    func validate(udp: Bool, listening: Bool) throws {
        let anyTLS = !applicationProtocols.isEmpty || insecure || cert != nil || key != nil || pin != nil
        if anyTLS && !secured { throw ValidationError("--alpn, --insecure, --pin, --cert and --key need --tls, --dtls or --quic") }
        if [tls, dtls, quic].filter({ $0 }).count > 1 { throw ValidationError("--tls, --dtls and --quic exclude each other") }
        if quic {
            if udp { throw ValidationError("--quic runs over UDP by itself; leave out --udp") }
            if applicationProtocols.isEmpty { throw ValidationError("--quic needs an application protocol: --alpn NAME") }
        }
        if datagram && !quic { throw ValidationError("--datagram needs --quic") }
        if datagram && listening { throw ValidationError("--datagram applies to connect only") }
        if let pin, pin.count != 64 || !pin.allSatisfy(\.isHexDigit) {
            throw ValidationError("--pin takes the 64 hex digits of a SHA-256")
        }
        if pin != nil && insecure { throw ValidationError("--pin and --insecure contradict each other") }
        if listening && pin != nil { throw ValidationError("--pin applies to connect only") }
        if tls && udp { throw ValidationError("--tls runs over TCP; use --dtls for UDP") }
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together") }
        if listening && insecure { throw ValidationError("--insecure applies to connect only") }
    }

    /// The parameters for this command line: TCP, TLS over TCP, UDP, DTLS over UDP or QUIC. A TLS or
    /// DTLS listener without `--cert`/`--key` gets a self-signed identity (see
    /// ``localIdentity(listening:)``).
    func parameters(udp: Bool, listening: Bool = false) throws -> NWParameters {
        guard secured else { return udp ? .udp : .tcp }
        let options = NWProtocolTLS.Options()
        let quicOptions = NWProtocolQUIC.Options(alpn: applicationProtocols)
        quicOptions.isDatagram = datagram
        let security = quic ? quicOptions.securityProtocolOptions : options.securityProtocolOptions
        if !quic {
            for name in applicationProtocols { sec_protocol_options_add_tls_application_protocol(security, name) }
        }
        if insecure { sec_protocol_options_set_peer_authentication_required(security, false) }
        if let pin = pin?.lowercased() {
            sec_protocol_options_set_verify_block(security, { _, trust, complete in
                complete(trust.certificates.first.map { SHA256.hex($0.derData) } == pin)
            }, DispatchQueue(label: "nwcat.pin"))
        }
        if let identity = try localIdentity(listening: listening) {
            sec_protocol_options_set_local_identity(security, identity)
        }
        if quic { return NWParameters(quic: quicOptions) }
        return dtls ? NWParameters(dtls: options) : NWParameters(tls: options)
    }

    /// The identity this side presents: the PEM files given; else, for a listener, a fresh
    /// self-signed one whose pin goes to standard error (a TLS server cannot run without an
    /// identity, and the pin is how a client can trust one nobody signed); else none.
    func localIdentity(listening: Bool) throws -> sec_identity_t? {
        if let cert, let key {
            let chain = try String(contentsOfFile: cert, encoding: .utf8)
            let privateKey = try String(contentsOfFile: key, encoding: .utf8)
            guard let identity = sec_identity_create_with_pem(certificateChain: chain, privateKey: privateKey) else {
                throw ValidationError("no certificate or private key found in \(cert) / \(key)")
            }
            return identity
        }
        guard listening else { return nil }
        let generated = try SelfSignedIdentity.generate()
        Console.log(generated.announcement)
        return generated.identity
    }
}
