import CGnuTLS
import NIOCore

/// Checks a server certificate against the name (or address) the client asked for, RFC 6125
/// style (subjectAltName DNS and IP entries, wildcards in the left-most label only), with
/// GnuTLS. The TLS stack does this itself instead of leaving it to swift-nio-ssl, whose check
/// needs the socket's peer address, which NIO does not learn for a Fast Open (deferred) connect.
enum HostNameCheck {
    /// Whether `leaf` (DER) is valid for `name`: a DNS name, or an IPv4/IPv6 literal.
    static func matches(leaf: [UInt8], name: String) -> Bool {
        var certificate: gnutls_x509_crt_t?
        guard gnutls_x509_crt_init(&certificate) >= 0 else { return false }
        defer { gnutls_x509_crt_deinit(certificate) }
        let imported: Int32 = leaf.withUnsafeBufferPointer { bytes in
            var datum = gnutls_datum_t(data: UnsafeMutablePointer(mutating: bytes.baseAddress), size: UInt32(bytes.count))
            return gnutls_x509_crt_import(certificate, &datum, GNUTLS_X509_FMT_DER)
        }
        guard imported >= 0 else { return false }
        if let address = SocketAddress(literal: name, port: 0) {
            var bytes: [UInt8]
            switch address {
            case .v4(let v4):
                bytes = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            case .v6(let v6):
                bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            default:
                return false
            }
            return bytes.withUnsafeMutableBufferPointer { ip in
                gnutls_x509_crt_check_ip(certificate, ip.baseAddress, UInt32(ip.count), 0) != 0
            }
        }
        return gnutls_x509_crt_check_hostname2(certificate, name, 0) != 0
    }
}
