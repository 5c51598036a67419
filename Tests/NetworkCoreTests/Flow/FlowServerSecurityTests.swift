import NIOCore
import Testing

@testable import NetworkCore

/// How long an inbound TLS handshake may take (the attacker's side is measured end to end in
/// the Behaviour.HostilePeers suite).
@Suite("Core.FlowServerSecurity")
struct FlowServerSecurityTests {
    @Test func theListenersConnectionTimeoutBoundsTheHandshakeAndSeventyFiveSecondsOtherwise() {
        #expect(FlowServerSecurity.handshakeTimeout(connectionTimeout: 0) == .seconds(75))
        #expect(FlowServerSecurity.handshakeTimeout(connectionTimeout: -1) == .seconds(75))
        #expect(FlowServerSecurity.handshakeTimeout(connectionTimeout: 7) == .seconds(7))
    }
}
