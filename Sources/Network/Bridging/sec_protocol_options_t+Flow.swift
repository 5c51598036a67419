import Dispatch
import Foundation
import NetworkCore

extension sec_protocol_options_t {
    /// The engine's view of these settings, taken when a connection or listener is created.
    /// `peerHostName` is the host a connection verifies when no server name is set (nil for a
    /// listener); `listener` says the verify block judges clients rather than a server.
    func flowConfiguration(peerHostName: String? = nil, listener: Bool = false) -> FlowTLSConfiguration {
        let snapshot = settings.withLock { $0 }
        var tls = FlowTLSConfiguration()
        tls.minimumVersion = snapshot.minimumVersion?.rawValue
        tls.maximumVersion = snapshot.maximumVersion?.rawValue
        tls.applicationProtocols = snapshot.applicationProtocols
        tls.serverName = snapshot.serverName
        tls.peerAuthenticationRequired = snapshot.peerAuthenticationRequired
        tls.peerAuthenticationOptional = snapshot.peerAuthenticationOptional
        tls.preSharedKeys = snapshot.preSharedKeys.map { (key: $0.key, identity: String(decoding: $0.identity, as: UTF8.self)) }
        tls.cipherSuites = snapshot.cipherSuites
        tls.resumption = snapshot.toggles["resumption"] ?? true
        tls.tickets = snapshot.toggles["tickets"] ?? true
        if let identity = snapshot.localIdentity {
            tls.certificateChain = identity.certificateChain.map { Array($0) }
            tls.privateKey = Array(identity.privateKeyDER)
        }
        if let block = snapshot.verifyBlock {
            let queue = snapshot.verifyQueue ?? DispatchQueue.global()
            // The name default verification would check, so that SecTrustEvaluateWithError in
            // the block reaches the same verdict.
            let serverName = listener ? nil : snapshot.serverName ?? peerHostName
            tls.verify = { chain, complete in
                let certificates = chain.map { sec_certificate_t(derData: Data($0)) }
                let metadata = sec_protocol_metadata_t(
                    negotiatedProtocol: nil, negotiatedVersion: nil, peerCertificates: certificates, serverName: serverName)
                let trust = sec_trust_t(certificates: certificates, serverName: serverName, server: !listener)
                queue.async { block(metadata, trust, complete) }
            }
        }
        if let challenge = snapshot.challengeBlock {
            let queue = snapshot.challengeQueue ?? DispatchQueue.global()
            let serverName = snapshot.serverName
            tls.challenge = { complete in
                let metadata = sec_protocol_metadata_t(
                    negotiatedProtocol: nil, negotiatedVersion: nil, peerCertificates: [], serverName: serverName)
                queue.async {
                    challenge(metadata) { identity in
                        complete(identity.map { (certificates: $0.certificateChain.map { Array($0) }, key: Array($0.privateKeyDER)) })
                    }
                }
            }
        }
        return tls
    }
}

extension sec_protocol_metadata_t {
    /// Metadata for a completed session.
    convenience init(_ facts: TLSSessionFacts) {
        self.init(
            negotiatedProtocol: facts.negotiatedProtocol,
            negotiatedVersion: facts.version.flatMap(tls_protocol_version_t.init(rawValue:)),
            peerCertificates: facts.peerCertificates.map { sec_certificate_t(derData: Data($0)) },
            serverName: facts.serverName,
            negotiatedCipherSuite: facts.cipherSuite.flatMap(tls_ciphersuite_t.init(rawValue:)),
            earlyDataAccepted: facts.earlyDataAccepted)
    }
}
