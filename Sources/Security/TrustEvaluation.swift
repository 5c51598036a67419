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
        var list: GnuTLSLibrary.Handle?
        guard let gnutls = GnuTLSLibrary.shared, gnutls.trustListInit(&list, 0) == GnuTLSConstant.success, let list else {
            return Self.error(errSecNotTrusted, "the trust store could not be set up")
        }
        defer { gnutls.trustListDeinit(list, 1) }  // 1: also frees the anchors it owns
        if let anchors = state.anchors {
            // The list takes ownership of the handles it is given.
            let handles: [GnuTLSLibrary.Handle?] = anchors.compactMap { GnuTLSCertificate(der: $0.der)?.release() }
            if !handles.isEmpty { _ = gnutls.trustListAddCAs(list, handles, UInt32(handles.count), 0) }
        }
        if state.anchors == nil || !state.anchorsOnly {
            _ = gnutls.trustListAddSystemTrust(list, 0, 0)
        }

        // Typed data: the key purpose and, for a client checking a server, the host name.
        var strings: [UnsafeMutablePointer<CChar>] = []
        defer { strings.forEach { free($0) } }
        var data: [GnuTLSTypedData] = []
        func add(_ type: UInt32, _ text: String) {
            guard let copy = strdup(text) else { return }
            strings.append(copy)
            data.append(GnuTLSTypedData(type: type, data: UnsafeMutableRawPointer(copy).assumingMemoryBound(to: UInt8.self), size: 0))
        }
        if case .ssl(let server, let hostname) = policy.kind {
            add(GnuTLSConstant.dataKeyPurpose, server ? GnuTLSConstant.purposeServer : GnuTLSConstant.purposeClient)
            if server, let hostname, !hostname.isEmpty { add(GnuTLSConstant.dataHostname, hostname) }
        }

        var handles: [GnuTLSLibrary.Handle?] = chain.compactMap(\.handle)
        var status: UInt32 = 0
        let result = data.withUnsafeMutableBufferPointer { typed in
            gnutls.trustListVerifyCrt2(list, &handles, UInt32(handles.count), typed.baseAddress, UInt32(typed.count), 0, &status, nil)
        }
        withExtendedLifetime(chain) {}
        guard result == GnuTLSConstant.success else { return Self.error(errSecNotTrusted, "the chain could not be verified") }
        guard status != 0 else { return nil }
        let name = state.certificates.first.flatMap(SecCertificateCopySubjectSummary) ?? "certificate"
        return Self.error(Self.status(for: status), Self.message(for: status, name: name))
    }

    /// The errSec code for GnuTLS's status bits. A broken chain outranks dates, and dates
    /// outrank the host name, so the reason given is the most fundamental one.
    static func status(for bits: UInt32) -> OSStatus {
        let status = GnuTLSStatus(rawValue: bits)
        let untrusted: GnuTLSStatus = [
            .signerNotFound, .signerNotCA, .signatureFailure, .revoked, .insecureAlgorithm, .signerConstraintsFailure,
        ]
        if !status.isDisjoint(with: untrusted) { return errSecNotTrusted }
        if status.contains(.expired) { return errSecCertificateExpired }
        if status.contains(.notActivated) { return errSecCertificateNotValidYet }
        if status.contains(.unexpectedOwner) { return errSecHostNameMismatch }
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
