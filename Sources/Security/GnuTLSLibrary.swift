#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Why GnuTLS is looked up at run time instead of imported through the CGnuTLS module map:
// a package that merely has this `Security` module in its build graph (swift-certificates,
// with its `#if canImport(Security)` code) imports it without depending on it, so the compiler
// must be able to load `Security` without any C module behind it. Debug builds compile with
// testing enabled, which makes even `internal import`s required by every importer; a
// `Security` that imported CGnuTLS therefore broke those packages ("missing required module
// 'CGnuTLS'"). Resolving the handful of functions below with dlopen/dlsym keeps the module
// pure Swift. libgnutls.so.30 is the ABI every GnuTLS since 3.4 ships.

// The C structs GnuTLS reads and writes, mirrored field for field (Swift lays out such structs
// in declaration order with natural alignment, as C does). They cross as raw pointers, since
// `@convention(c)` cannot name Swift structs.

/// GnuTLS's byte blob (`gnutls_datum_t`: pointer, then 32-bit length).
struct GnuTLSDatum {
    var data: UnsafeMutablePointer<UInt8>?
    var size: UInt32
}

/// A typed verification input (`gnutls_typed_vdata_st`: kind, pointer, 32-bit length).
struct GnuTLSTypedData {
    var type: UInt32
    var data: UnsafeMutablePointer<UInt8>?
    var size: UInt32
}

/// The values of the GnuTLS constants this module passes or checks (from gnutls.h / x509.h).
enum GnuTLSConstant {
    static let success: Int32 = 0
    static let shortMemoryBuffer: Int32 = -51
    static let decryptionFailed: Int32 = -24
    static let macVerifyFailed: Int32 = -100
    /// `GNUTLS_X509_FMT_DER`.
    static let formatDER: UInt32 = 0
    /// `GNUTLS_PKCS_PLAIN`: export a private key unencrypted.
    static let pkcsPlain: UInt32 = 1
    /// `GNUTLS_DT_DNS_HOSTNAME` and `GNUTLS_DT_KEY_PURPOSE_OID`.
    static let dataHostname: UInt32 = 1
    static let dataKeyPurpose: UInt32 = 2
    /// `GNUTLS_KP_TLS_WWW_SERVER` / `_CLIENT`.
    static let purposeServer = "1.3.6.1.5.5.7.3.1"
    static let purposeClient = "1.3.6.1.5.5.7.3.2"
}

/// The verification status bits (`gnutls_certificate_status_t`).
struct GnuTLSStatus: OptionSet {
    let rawValue: UInt32
    static let revoked = GnuTLSStatus(rawValue: 1 << 5)
    static let signerNotFound = GnuTLSStatus(rawValue: 1 << 6)
    static let signerNotCA = GnuTLSStatus(rawValue: 1 << 7)
    static let insecureAlgorithm = GnuTLSStatus(rawValue: 1 << 8)
    static let notActivated = GnuTLSStatus(rawValue: 1 << 9)
    static let expired = GnuTLSStatus(rawValue: 1 << 10)
    static let signatureFailure = GnuTLSStatus(rawValue: 1 << 11)
    static let unexpectedOwner = GnuTLSStatus(rawValue: 1 << 14)
    static let signerConstraintsFailure = GnuTLSStatus(rawValue: 1 << 16)
}

/// The GnuTLS functions this module calls, resolved once. Nil when libgnutls is not installed;
/// callers then fail the way a parse or verification failure would.
struct GnuTLSLibrary: @unchecked Sendable {  // immutable C function pointers
    typealias Handle = OpaquePointer
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let crtInit: @convention(c) (UnsafeMutablePointer<Handle?>) -> Int32
    let crtDeinit: @convention(c) (Handle?) -> Void
    let crtImport: @convention(c) (Handle?, UnsafeRawPointer, UInt32) -> Int32
    let crtExport2: @convention(c) (Handle?, UInt32, UnsafeMutableRawPointer) -> Int32
    let crtGetDNByOID: @convention(c) (Handle?, UnsafePointer<CChar>, UInt32, UInt32, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>) -> Int32
    let crtGetDN3: @convention(c) (Handle?, UnsafeMutableRawPointer, UInt32) -> Int32
    let trustListInit: @convention(c) (UnsafeMutablePointer<Handle?>, UInt32) -> Int32
    let trustListDeinit: @convention(c) (Handle?, UInt32) -> Void
    let trustListAddCAs: @convention(c) (Handle?, UnsafePointer<Handle?>, UInt32, UInt32) -> Int32
    let trustListAddSystemTrust: @convention(c) (Handle?, UInt32, UInt32) -> Int32
    let trustListVerifyCrt2: @convention(c) (
        Handle?, UnsafeMutablePointer<Handle?>, UInt32, UnsafeMutableRawPointer?, UInt32, UInt32,
        UnsafeMutablePointer<UInt32>, UnsafeMutableRawPointer?
    ) -> Int32
    let pkcs12Init: @convention(c) (UnsafeMutablePointer<Handle?>) -> Int32
    let pkcs12Deinit: @convention(c) (Handle?) -> Void
    let pkcs12Import: @convention(c) (Handle?, UnsafeRawPointer, UInt32, UInt32) -> Int32
    let pkcs12VerifyMAC: @convention(c) (Handle?, UnsafePointer<CChar>?) -> Int32
    let pkcs12SimpleParse: @convention(c) (
        Handle?, UnsafePointer<CChar>?, UnsafeMutablePointer<Handle?>,
        UnsafeMutablePointer<UnsafeMutablePointer<Handle?>?>, UnsafeMutablePointer<UInt32>,
        UnsafeMutablePointer<UnsafeMutablePointer<Handle?>?>, UnsafeMutablePointer<UInt32>, UnsafeMutablePointer<Handle?>?, UInt32
    ) -> Int32
    let privateKeyDeinit: @convention(c) (Handle?) -> Void
    let privateKeyExportPKCS8: @convention(c) (Handle?, UInt32, UnsafePointer<CChar>?, UInt32, UnsafeMutableRawPointer) -> Int32

    /// The process-wide instance.
    static let shared: GnuTLSLibrary? = load()

    private static func load() -> GnuTLSLibrary? {
        let names: [String] = ["libgnutls.so.30", "libgnutls.so"]
        guard let library = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else { return nil }
        // The key path only names the field, and so the function type to cast the address to.
        func symbol<T>(_ name: String, _ field: KeyPath<GnuTLSLibrary, T>) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: T.self) }
        }
        // `gnutls_free` is a variable holding the deallocator, not a function.
        typealias Deallocator = @convention(c) (UnsafeMutableRawPointer?) -> Void
        guard let freeVariable = dlsym(library, "gnutls_free"),
            let free = freeVariable.assumingMemoryBound(to: Deallocator?.self).pointee,
            let crtInit = symbol("gnutls_x509_crt_init", \.crtInit),
            let crtDeinit = symbol("gnutls_x509_crt_deinit", \.crtDeinit),
            let crtImport = symbol("gnutls_x509_crt_import", \.crtImport),
            let crtExport2 = symbol("gnutls_x509_crt_export2", \.crtExport2),
            let crtGetDNByOID = symbol("gnutls_x509_crt_get_dn_by_oid", \.crtGetDNByOID),
            let crtGetDN3 = symbol("gnutls_x509_crt_get_dn3", \.crtGetDN3),
            let trustListInit = symbol("gnutls_x509_trust_list_init", \.trustListInit),
            let trustListDeinit = symbol("gnutls_x509_trust_list_deinit", \.trustListDeinit),
            let trustListAddCAs = symbol("gnutls_x509_trust_list_add_cas", \.trustListAddCAs),
            let trustListAddSystemTrust = symbol("gnutls_x509_trust_list_add_system_trust", \.trustListAddSystemTrust),
            let trustListVerifyCrt2 = symbol("gnutls_x509_trust_list_verify_crt2", \.trustListVerifyCrt2),
            let pkcs12Init = symbol("gnutls_pkcs12_init", \.pkcs12Init),
            let pkcs12Deinit = symbol("gnutls_pkcs12_deinit", \.pkcs12Deinit),
            let pkcs12Import = symbol("gnutls_pkcs12_import", \.pkcs12Import),
            let pkcs12VerifyMAC = symbol("gnutls_pkcs12_verify_mac", \.pkcs12VerifyMAC),
            let pkcs12SimpleParse = symbol("gnutls_pkcs12_simple_parse", \.pkcs12SimpleParse),
            let privateKeyDeinit = symbol("gnutls_x509_privkey_deinit", \.privateKeyDeinit),
            let privateKeyExportPKCS8 = symbol("gnutls_x509_privkey_export2_pkcs8", \.privateKeyExportPKCS8)
        else { return nil }
        return GnuTLSLibrary(
            free: free, crtInit: crtInit, crtDeinit: crtDeinit, crtImport: crtImport, crtExport2: crtExport2,
            crtGetDNByOID: crtGetDNByOID, crtGetDN3: crtGetDN3, trustListInit: trustListInit, trustListDeinit: trustListDeinit,
            trustListAddCAs: trustListAddCAs, trustListAddSystemTrust: trustListAddSystemTrust,
            trustListVerifyCrt2: trustListVerifyCrt2, pkcs12Init: pkcs12Init, pkcs12Deinit: pkcs12Deinit,
            pkcs12Import: pkcs12Import, pkcs12VerifyMAC: pkcs12VerifyMAC, pkcs12SimpleParse: pkcs12SimpleParse,
            privateKeyDeinit: privateKeyDeinit, privateKeyExportPKCS8: privateKeyExportPKCS8)
    }
}
