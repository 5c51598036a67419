#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import Foundation
import Network

/// A certificate and private key that `nwcat listen --tls` makes for itself when it is given no
/// `--cert`/`--key`, so a quick TLS test needs no openssl incantation first.
///
/// Nobody's trust store knows this certificate, so clients must trust it explicitly: the
/// listener prints its SHA-256 pin, which `nwcat connect --tls --pin` takes as it is. The key
/// exists only in this process's memory and dies with it; it is never written or printed.
struct SelfSignedIdentity {
    /// The certificate, DER.
    let certificateDER: [UInt8]
    /// The identity to hand to `sec_protocol_options_set_local_identity`.
    let identity: sec_identity_t
    /// The names the certificate is valid for, as they appear in its subjectAltName.
    let names: [String]
    /// The certificate's last valid moment.
    let notAfter: Date

    /// Lower-case hex SHA-256 of the DER certificate: the form `--pin` accepts.
    var pin: String { SHA256.hex(certificateDER) }

    /// The line printed to standard error: what was made and how a client trusts it.
    var announcement: String {
        let day = ISO8601DateFormatter.string(from: notAfter, timeZone: TimeZone(identifier: "UTC") ?? .current,
                                              formatOptions: [.withFullDate])
        return "self-signed certificate for \(names.joined(separator: ", ")) (ECDSA P-256, valid until \(day)); "
            + "clients trust it with --pin \(pin)"
    }

    /// Why making the identity failed: the GnuTLS step and its message.
    struct Failure: Error, CustomStringConvertible {
        /// What was being made when GnuTLS failed.
        let step: String
        /// GnuTLS's (negative) error code.
        let code: Int32
        var description: String {
            let message = gnutls_strerror(code).map { String(cString: $0) } ?? "error \(code)"
            return "cannot make a self-signed certificate (\(step)): \(message)"
        }
    }

    /// Makes a fresh key pair and certificate for `hostName` (by default this machine's name).
    ///
    /// The certificate is valid from an hour ago (clients whose clocks lag a little still accept
    /// it) for 30 days, names the host, `localhost`, 127.0.0.1 and ::1 (the ways a client on the
    /// same machine or across the network reaches the listener), is not a CA, and is good for TLS
    /// server authentication only.
    static func generate(hostName: String = localHostName(), now: Date = Date()) throws -> SelfSignedIdentity {
        var key: gnutls_x509_privkey_t?
        try check(gnutls_x509_privkey_init(&key), "private key")
        defer { gnutls_x509_privkey_deinit(key) }
        // Bit 31 tells GnuTLS the "bits" argument names a curve (GNUTLS_CURVE_TO_BITS, a C macro
        // Swift cannot import).
        let p256 = UInt32(1) << 31 | GNUTLS_ECC_CURVE_SECP256R1.rawValue
        try check(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA, p256, 0), "ECDSA P-256 key")

        var certificate: gnutls_x509_crt_t?
        try check(gnutls_x509_crt_init(&certificate), "certificate")
        defer { gnutls_x509_crt_deinit(certificate) }
        try check(gnutls_x509_crt_set_version(certificate, 3), "version")
        try check(gnutls_x509_crt_set_key(certificate, key), "public key")

        // A random positive serial: two certificates from two runs never look like one
        // certificate that changed (clients that cache by issuer and serial would be confused).
        var serial = [UInt8](repeating: 0, count: 16)
        try check(gnutls_rnd(GNUTLS_RND_NONCE, &serial, serial.count), "serial")
        serial[0] = serial[0] & 0x7F | 0x40
        try check(gnutls_x509_crt_set_serial(certificate, serial, serial.count), "serial")

        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(30 * 86400)
        try check(gnutls_x509_crt_set_activation_time(certificate, time_t(notBefore.timeIntervalSince1970)), "validity")
        try check(gnutls_x509_crt_set_expiration_time(certificate, time_t(notAfter.timeIntervalSince1970)), "validity")

        let commonName = Array(hostName.utf8)
        try check(gnutls_x509_crt_set_dn_by_oid(certificate, GNUTLS_OID_X520_COMMON_NAME, 0, commonName, UInt32(commonName.count)),
                  "common name")

        var names = [hostName]
        if hostName != "localhost" { names.append("localhost") }
        for name in names {
            let bytes = Array(name.utf8)
            try check(gnutls_x509_crt_set_subject_alt_name(
                certificate, GNUTLS_SAN_DNSNAME, bytes, UInt32(bytes.count), UInt32(GNUTLS_FSAN_APPEND)), "subjectAltName")
        }
        let loopbacks: [(String, [UInt8])] = [("127.0.0.1", [127, 0, 0, 1]), ("::1", Array(repeating: 0, count: 15) + [1])]
        for (text, address) in loopbacks {
            try check(gnutls_x509_crt_set_subject_alt_name(
                certificate, GNUTLS_SAN_IPADDRESS, address, UInt32(address.count), UInt32(GNUTLS_FSAN_APPEND)), "subjectAltName")
            names.append(text)
        }

        try check(gnutls_x509_crt_set_basic_constraints(certificate, 0, -1), "basic constraints")
        try check(gnutls_x509_crt_set_key_usage(certificate, UInt32(GNUTLS_KEY_DIGITAL_SIGNATURE)), "key usage")
        try check(gnutls_x509_crt_set_key_purpose_oid(certificate, GNUTLS_KP_TLS_WWW_SERVER, 0), "extended key usage")
        let keyID = try export("key identifier") { gnutls_x509_crt_get_key_id(certificate, 0, $0, $1) }
        try check(gnutls_x509_crt_set_subject_key_id(certificate, keyID, keyID.count), "subject key identifier")

        try check(gnutls_x509_crt_sign2(certificate, certificate, key, GNUTLS_DIG_SHA256, 0), "signature")

        let certificateDER = try export("certificate") { gnutls_x509_crt_export(certificate, GNUTLS_X509_FMT_DER, $0, $1) }
        let keyDER = try export("private key") {
            gnutls_x509_privkey_export_pkcs8(key, GNUTLS_X509_FMT_DER, nil, GNUTLS_PKCS_PLAIN.rawValue, $0, $1)
        }
        guard let identity = sec_identity_create_with_der(certificateChain: [Data(certificateDER)], privateKey: Data(keyDER)) else {
            throw Failure(step: "identity", code: GNUTLS_E_INTERNAL_ERROR)
        }
        return SelfSignedIdentity(certificateDER: certificateDER, identity: identity, names: names, notAfter: notAfter)
    }

    /// This machine's host name, or `localhost` when it has none.
    static func localHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// Throws GnuTLS's error for a negative return code.
    private static func check(_ code: Int32, _ step: String) throws {
        if code < 0 { throw Failure(step: step, code: code) }
    }

    /// Runs a GnuTLS "write into this buffer" call, growing the buffer once if GnuTLS says it is
    /// too small (it then reports the size it needs).
    private static func export(
        _ step: String, _ body: (UnsafeMutableRawPointer, UnsafeMutablePointer<Int>) -> Int32
    ) throws -> [UInt8] {
        var capacity = 4096
        for _ in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: capacity)
            var size = capacity
            let code = bytes.withUnsafeMutableBytes { buffer -> Int32 in
                guard let base = buffer.baseAddress else { return GNUTLS_E_INTERNAL_ERROR }
                return body(base, &size)
            }
            if code == GNUTLS_E_SHORT_MEMORY_BUFFER, size > capacity {
                capacity = size
                continue
            }
            try check(code, step)
            return Array(bytes.prefix(size))
        }
        throw Failure(step: step, code: GNUTLS_E_SHORT_MEMORY_BUFFER)
    }
}
