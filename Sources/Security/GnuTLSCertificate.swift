import Foundation

/// One X.509 certificate parsed by GnuTLS, freed with the object. Internal: the public face is
/// ``SecCertificate``, which keeps only the DER bytes and parses on demand.
final class GnuTLSCertificate {
    private let gnutls: GnuTLSLibrary
    /// The GnuTLS handle; nil once ownership was handed to a trust list.
    private(set) var handle: GnuTLSLibrary.Handle?

    /// Parses DER bytes; nil when GnuTLS is missing or does not accept them as a certificate.
    init?(der: Data) {
        guard let gnutls = GnuTLSLibrary.shared, !der.isEmpty else { return nil }
        var certificate: GnuTLSLibrary.Handle?
        guard gnutls.crtInit(&certificate) == GnuTLSConstant.success, let certificate else { return nil }
        guard GnuTLS.withDatum(der, { gnutls.crtImport(certificate, $0, GnuTLSConstant.formatDER) }) == GnuTLSConstant.success else {
            gnutls.crtDeinit(certificate)
            return nil
        }
        self.gnutls = gnutls
        handle = certificate
    }

    /// Takes a handle GnuTLS allocated for us (as PKCS#12 parsing does).
    init(owning handle: GnuTLSLibrary.Handle, in gnutls: GnuTLSLibrary) {
        self.gnutls = gnutls
        self.handle = handle
    }

    deinit {
        if let handle { gnutls.crtDeinit(handle) }
    }

    /// Gives the handle away (a trust list frees the anchors it was given).
    func release() -> GnuTLSLibrary.Handle? {
        defer { handle = nil }
        return handle
    }

    /// The certificate re-encoded as DER.
    var der: Data? {
        guard let handle else { return nil }
        var datum = GnuTLSDatum(data: nil, size: 0)
        guard gnutls.crtExport2(handle, GnuTLSConstant.formatDER, &datum) == GnuTLSConstant.success else { return nil }
        return GnuTLS.take(&datum, gnutls)
    }

    /// The first value of the subject attribute `oid` (for example the common name), or nil.
    func subjectAttribute(_ oid: String) -> String? {
        guard let handle else { return nil }
        var size = 0
        guard gnutls.crtGetDNByOID(handle, oid, 0, 0, nil, &size) == GnuTLSConstant.shortMemoryBuffer, size > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: size + 1)
        guard gnutls.crtGetDNByOID(handle, oid, 0, 0, &buffer, &size) == GnuTLSConstant.success else { return nil }
        return String(decoding: buffer.prefix(size).prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The whole subject name in RFC 4514 form.
    var subject: String? {
        guard let handle else { return nil }
        var datum = GnuTLSDatum(data: nil, size: 0)
        guard gnutls.crtGetDN3(handle, &datum, 0) == GnuTLSConstant.success else { return nil }
        return GnuTLS.take(&datum, gnutls).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Small helpers around GnuTLS's memory conventions.
enum GnuTLS {
    /// Copies a datum GnuTLS allocated for us and frees it.
    static func take(_ datum: inout GnuTLSDatum, _ gnutls: GnuTLSLibrary) -> Data? {
        guard let pointer = datum.data else { return nil }
        let data = Data(bytes: pointer, count: Int(datum.size))
        gnutls.free(pointer)
        datum.data = nil
        return data
    }

    /// Runs `body` with a datum viewing `data` (GnuTLS only reads it).
    static func withDatum<R>(_ data: Data, _ body: (UnsafeRawPointer) -> R) -> R {
        data.withUnsafeBytes { bytes in
            var datum = GnuTLSDatum(
                data: bytes.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self)) },
                size: UInt32(clamping: bytes.count))
            return body(&datum)
        }
    }
}
