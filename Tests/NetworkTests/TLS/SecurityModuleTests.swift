import Dispatch
import Foundation
import Network
import Security
import Testing

/// Apple-platform code writes `import Network` and sometimes `import Security`; both work and
/// name the same types.
@Suite("TLS.SecurityModule")
struct SecurityModuleTests {
    @Test func optionsAreCopiedWithParameters() {
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_min_tls_protocol_version(tls.securityProtocolOptions, .TLSv13)
        sec_protocol_options_add_tls_application_protocol(tls.securityProtocolOptions, "h2")
        let parameters = NWParameters(tls: tls)
        let copy = parameters.copy()
        let copied = copy.defaultProtocolStack.applicationProtocols.first as? NWProtocolTLS.Options
        #expect(copied != nil)
        #expect(copied !== tls)
        #expect(copied?.securityProtocolOptions !== tls.securityProtocolOptions)
        // Changing the copy leaves the original alone.
        if let copied { sec_protocol_options_add_tls_application_protocol(copied.securityProtocolOptions, "http/1.1") }
        #expect(tls.securityProtocolOptions.settings.withLock { $0.applicationProtocols } == ["h2"])
        #expect(copied?.securityProtocolOptions.settings.withLock { $0.applicationProtocols } == ["h2", "http/1.1"])
    }

    @Test func identitiesNeedACertificateAndAKey() {
        #expect(sec_identity_create_with_pem(certificateChain: "not pem", privateKey: "nor this") == nil)
        #expect(sec_identity_create_with_der(certificateChain: [], privateKey: Data([1])) == nil)
        let pem = """
            -----BEGIN CERTIFICATE-----
            AQID
            -----END CERTIFICATE-----
            """
        let key = """
            -----BEGIN PRIVATE KEY-----
            BAUG
            -----END PRIVATE KEY-----
            """
        let identity = sec_identity_create_with_pem(certificateChain: pem, privateKey: key)
        #expect(identity?.certificateChain == [Data([1, 2, 3])])
    }

    @Test func versionWireValues() {
        #expect(tls_protocol_version_t.TLSv12.rawValue == 0x0303)
        #expect(tls_protocol_version_t.TLSv13.rawValue == 0x0304)
        #expect(tls_protocol_version_t.DTLSv12.rawValue == 0xfefd)
    }

    @Test func aListenerWithoutAnIdentityFails() async throws {
        let listener = try NWListener(using: .tls)
        let states = AsyncStream<NWListener.State>.makeStream()
        listener.stateUpdateHandler = { states.continuation.yield($0) }
        listener.start(queue: DispatchQueue(label: "no-identity"))
        var iterator = states.stream.makeAsyncIterator()
        #expect(await iterator.next() == .failed(.tls(-9808)))
        listener.cancel()
    }
}
