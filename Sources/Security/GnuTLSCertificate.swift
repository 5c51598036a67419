// @preconcurrency: GnuTLS exports its deallocator as a global function pointer (`gnutls_free`)
// that it sets once when the library loads; reading it from any thread is safe.
@preconcurrency import CGnuTLS
import Foundation

/// One X.509 certificate parsed by GnuTLS, freed with the object. Internal: the public face is
/// ``SecCertificate``, which keeps only the DER bytes and parses on demand.
final class GnuTLSCertificate {
    /// The GnuTLS handle; nil once ownership was handed to a trust list.
    private(set) var handle: gnutls_x509_crt_t?

    /// Parses DER bytes; nil when GnuTLS does not accept them as a certificate.
    init?(der: Data) {
        var certificate: gnutls_x509_crt_t?
        guard gnutls_x509_crt_init(&certificate) == GNUTLS_E_SUCCESS, let certificate else { return nil }
        let status = der.isEmpty
            ? GNUTLS_E_PARSING_ERROR : GnuTLS.withDatum(der) { gnutls_x509_crt_import(certificate, &$0, GNUTLS_X509_FMT_DER) }
        guard status == GNUTLS_E_SUCCESS else {
            gnutls_x509_crt_deinit(certificate)
            return nil
        }
        handle = certificate
    }

    /// Takes an existing handle (one GnuTLS allocated for us, as PKCS#12 parsing does).
    init(owning handle: gnutls_x509_crt_t) {
        self.handle = handle
    }

    deinit {
        if let handle { gnutls_x509_crt_deinit(handle) }
    }

    /// Gives the handle away (a trust list frees the anchors it was given).
    func release() -> gnutls_x509_crt_t? {
        defer { handle = nil }
        return handle
    }

    /// The certificate re-encoded as DER.
    var der: Data? {
        guard let handle else { return nil }
        var datum = gnutls_datum_t()
        guard gnutls_x509_crt_export2(handle, GNUTLS_X509_FMT_DER, &datum) == GNUTLS_E_SUCCESS else { return nil }
        return GnuTLS.take(&datum)
    }

    /// The first value of the subject attribute `oid` (for example the common name), or nil.
    func subjectAttribute(_ oid: String) -> String? {
        guard let handle else { return nil }
        var size = 0
        guard gnutls_x509_crt_get_dn_by_oid(handle, oid, 0, 0, nil, &size) == GNUTLS_E_SHORT_MEMORY_BUFFER, size > 0 else {
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: size + 1)
        guard gnutls_x509_crt_get_dn_by_oid(handle, oid, 0, 0, &buffer, &size) == GNUTLS_E_SUCCESS else { return nil }
        return String(decoding: buffer.prefix(size).prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The whole subject name in RFC 4514 form.
    var subject: String? {
        guard let handle else { return nil }
        var datum = gnutls_datum_t()
        guard gnutls_x509_crt_get_dn3(handle, &datum, 0) == GNUTLS_E_SUCCESS else { return nil }
        return GnuTLS.take(&datum).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Small helpers around GnuTLS's memory conventions.
enum GnuTLS {
    /// Copies a datum GnuTLS allocated for us and frees it.
    static func take(_ datum: inout gnutls_datum_t) -> Data? {
        guard let pointer = datum.data else { return nil }
        let data = Data(bytes: pointer, count: Int(datum.size))
        gnutls_free(pointer)
        datum.data = nil
        return data
    }

    /// Runs `body` with a datum viewing `data` (GnuTLS only reads it).
    static func withDatum<R>(_ data: Data, _ body: (inout gnutls_datum_t) -> R) -> R {
        data.withUnsafeBytes { bytes in
            var datum = gnutls_datum_t(
                data: bytes.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self)) },
                size: UInt32(clamping: bytes.count))
            return body(&datum)
        }
    }
}
