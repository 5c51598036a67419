import CGnuTLS
import Foundation

/// One run of GnuTLS's chain verification for a ``SecTrust``: builds the trust list (system
/// roots and/or the custom anchors), verifies the chain once per policy, and turns GnuTLS's
/// status bits into the Security framework's error.
struct TrustEvaluation {
    let state: SecTrust.State

    init(_ state: SecTrust.State) {
        self.state = state
    }

    /// Nil when the chain is trusted under every policy, else the first failure.
    func run() -> CFError? {
        let chain = state.certificates.compactMap { GnuTLSCertificate(der: $0.der) }
        guard !chain.isEmpty, chain.count == state.certificates.count else {
            return Self.error(errSecDecode, "a certificate could not be decoded")
        }
        let policies = state.policies.isEmpty ? [SecPolicyCreateBasicX509()] : state.policies
        for policy in policies {
            if let failure = verify(chain, under: policy) { return failure }
        }
        return nil
    }

    private func verify(_ chain: [GnuTLSCertificate], under policy: SecPolicy) -> CFError? {
        var list: gnutls_x509_trust_list_t?
        guard gnutls_x509_trust_list_init(&list, 0) == GNUTLS_E_SUCCESS, let list else {
            return Self.error(errSecNotTrusted, "the trust store could not be set up")
        }
        defer { gnutls_x509_trust_list_deinit(list, 1) }  // 1: also frees the anchors it owns
        if let anchors = state.anchors {
            // The list takes ownership of the handles it is given.
            var handles: [gnutls_x509_crt_t?] = anchors.compactMap { GnuTLSCertificate(der: $0.der)?.release() }
            if !handles.isEmpty { _ = gnutls_x509_trust_list_add_cas(list, &handles, UInt32(handles.count), 0) }
        }
        if state.anchors == nil || !state.anchorsOnly {
            _ = gnutls_x509_trust_list_add_system_trust(list, 0, 0)
        }

        // Typed data: the key purpose and, for a client checking a server, the host name.
        var strings: [UnsafeMutablePointer<CChar>] = []
        defer { strings.forEach { free($0) } }
        var data: [gnutls_typed_vdata_st] = []
        func add(_ type: gnutls_vdata_types_t, _ text: String) {
            guard let copy = strdup(text) else { return }
            strings.append(copy)
            data.append(gnutls_typed_vdata_st(
                type: type, data: UnsafeMutableRawPointer(copy).assumingMemoryBound(to: UInt8.self), size: 0))
        }
        if case .ssl(let server, let hostname) = policy.kind {
            add(GNUTLS_DT_KEY_PURPOSE_OID, server ? GNUTLS_KP_TLS_WWW_SERVER : GNUTLS_KP_TLS_WWW_CLIENT)
            if server, let hostname, !hostname.isEmpty { add(GNUTLS_DT_DNS_HOSTNAME, hostname) }
        }

        var handles: [gnutls_x509_crt_t?] = chain.compactMap(\.handle)
        var status: UInt32 = 0
        let result = data.withUnsafeMutableBufferPointer { typed in
            gnutls_x509_trust_list_verify_crt2(
                list, &handles, UInt32(handles.count), typed.baseAddress, UInt32(typed.count), 0, &status, nil)
        }
        withExtendedLifetime(chain) {}
        guard result == GNUTLS_E_SUCCESS else { return Self.error(errSecNotTrusted, "the chain could not be verified") }
        guard status != 0 else { return nil }
        let name = state.certificates.first.flatMap(SecCertificateCopySubjectSummary) ?? "certificate"
        return Self.error(Self.status(for: status), Self.message(for: status, name: name))
    }

    private static func has(_ status: UInt32, _ flag: gnutls_certificate_status_t) -> Bool {
        status & flag.rawValue != 0
    }

    /// The errSec code for GnuTLS's status bits. A broken chain outranks dates, and dates
    /// outrank the host name, so the reason given is the most fundamental one.
    static func status(for bits: UInt32) -> OSStatus {
        let untrusted: [gnutls_certificate_status_t] = [
            GNUTLS_CERT_SIGNER_NOT_FOUND, GNUTLS_CERT_SIGNER_NOT_CA, GNUTLS_CERT_SIGNATURE_FAILURE,
            GNUTLS_CERT_REVOKED, GNUTLS_CERT_INSECURE_ALGORITHM, GNUTLS_CERT_SIGNER_CONSTRAINTS_FAILURE,
        ]
        if untrusted.contains(where: { has(bits, $0) }) { return errSecNotTrusted }
        if has(bits, GNUTLS_CERT_EXPIRED) { return errSecCertificateExpired }
        if has(bits, GNUTLS_CERT_NOT_ACTIVATED) { return errSecCertificateNotValidYet }
        if has(bits, GNUTLS_CERT_UNEXPECTED_OWNER) { return errSecHostNameMismatch }
        return errSecNotTrusted
    }

    private static func message(for bits: UInt32, name: String) -> String {
        switch status(for: bits) {
        case errSecCertificateExpired: return "“\(name)” has expired"
        case errSecCertificateNotValidYet: return "“\(name)” is not valid yet"
        case errSecHostNameMismatch: return "“\(name)” is not valid for the requested host name"
        default: return "“\(name)” certificate is not trusted"
        }
    }

    static func error(_ status: OSStatus, _ description: String) -> CFError {
        NSError(domain: NSOSStatusErrorDomain, code: Int(status), userInfo: [NSLocalizedDescriptionKey: description])
    }
}
