import Testing

@testable import NetworkCore

/// The GnuTLS priority a QUIC connection's TLS 1.3 runs with, from its TLS settings.
@Suite("Core.QUICPriority")
struct QUICPriorityTests {
    static let base = "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE"

    @Test func withoutNamedSuitesTheDefaultsStay() {
        #expect(GnuTLSPriority.quicString(for: FlowTLSConfiguration()) == Self.base)
    }

    @Test func namedTLS13SuitesAreTheOnlyCiphersInTheirOrder() {
        var settings = FlowTLSConfiguration()
        settings.cipherSuites = [0x1303, 0xC02B, 0x1301, 0x1303]
        #expect(GnuTLSPriority.quicString(for: settings) == Self.base + ":-CIPHER-ALL:+CHACHA20-POLY1305:+AES-128-GCM")
    }

    @Test func suitesOfEarlierVersionsAloneLeaveTheDefaults() {
        var settings = FlowTLSConfiguration()
        settings.cipherSuites = [0xC02B, 0xCCA9]
        #expect(GnuTLSPriority.quicString(for: settings) == Self.base)
    }
}
