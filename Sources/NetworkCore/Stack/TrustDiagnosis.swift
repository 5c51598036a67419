#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS

/// Tells why the default verification refused a peer certificate, after BoringSSL refused it.
///
/// BoringSSL reports every failed chain check as one error, `CERTIFICATE_VERIFY_FAILED`: the
/// precise reason (`X509_V_ERR_CERT_HAS_EXPIRED`, an unknown issuer, …) stays in the SSL object,
/// which swift-nio-ssl does not expose, and its error text never says "expired". Apple's
/// framework does tell an expired certificate (errSSLCertExpired) from an untrusted one
/// (errSSLXCertChainInvalid), and apps show different messages for them. So on that failure the
/// leaf the peer sent is examined again: when its dates are wrong *and* it chains to the system
/// trust store once dates are ignored, the dates were the reason; otherwise it is untrusted.
///
/// Runs only on a failed handshake, so loading the trust store here (a few milliseconds) costs
/// nothing on the path that succeeds.
package enum TrustDiagnosis {
    /// What the second look found.
    package enum Finding: Equatable, Sendable {
        /// Trusted but past its end date.
        case expired
        /// Trusted but before its start date.
        case notYetValid
        /// Not trusted, or the reason cannot be told: the chain itself is the problem.
        case untrusted
    }

    /// Diagnoses `leaf` (DER). Only the leaf is examined (swift-nio-ssl gives no other
    /// certificate of a failed handshake): a leaf issued by an intermediate does not chain to a
    /// root alone, so its date problems read as `untrusted`, as before this diagnosis existed.
    package static func diagnose(leaf: [UInt8], now: time_t = time(nil)) -> Finding {
        var certificate: gnutls_x509_crt_t?
        guard gnutls_x509_crt_init(&certificate) >= 0 else { return .untrusted }
        defer { gnutls_x509_crt_deinit(certificate) }
        let imported = leaf.withUnsafeBytes { bytes -> Int32 in
            var datum = gnutls_datum_t(
                data: UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress), size: UInt32(bytes.count))
            return gnutls_x509_crt_import(certificate, &datum, GNUTLS_X509_FMT_DER)
        }
        guard imported >= 0 else { return .untrusted }

        let finding: Finding
        if now > gnutls_x509_crt_get_expiration_time(certificate) {
            finding = .expired
        } else if now < gnutls_x509_crt_get_activation_time(certificate) {
            finding = .notYetValid
        } else {
            return .untrusted  // the dates are fine, so they are not why it was refused
        }
        return chainsToSystemTrust(certificate) ? finding : .untrusted
    }

    /// Whether `certificate` is signed by a root of the system trust store, dates aside. GnuTLS
    /// reads the same bundle swift-nio-ssl does on Debian and Ubuntu
    /// (/etc/ssl/certs/ca-certificates.crt).
    private static func chainsToSystemTrust(_ certificate: gnutls_x509_crt_t?) -> Bool {
        var list: gnutls_x509_trust_list_t?
        guard gnutls_x509_trust_list_init(&list, 0) >= 0 else { return false }
        defer { gnutls_x509_trust_list_deinit(list, 1) }
        guard gnutls_x509_trust_list_add_system_trust(list, 0, 0) > 0 else { return false }
        var chain: [gnutls_x509_crt_t?] = [certificate]
        var status: UInt32 = 0
        let flags = GNUTLS_VERIFY_DISABLE_TIME_CHECKS.rawValue | GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS.rawValue
        let result = gnutls_x509_trust_list_verify_crt2(list, &chain, 1, nil, 0, flags, &status, nil)
        return result >= 0 && status == 0
    }
}
