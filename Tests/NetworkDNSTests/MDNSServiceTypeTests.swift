import NetworkDNS
import Testing

/// Which service types a listener may advertise and a browser may look for (RFC 6763 §7,
/// RFC 6335 §5.1).
@Suite("DNS.MDNSServiceType")
struct MDNSServiceTypeTests {
    @Test("_name._tcp and _name._udp with 1 to 15 letters, digits or hyphens; a trailing dot is allowed")
    func valid() {
        for type in ["_http._tcp", "_camera._udp", "_tictactoe._tcp", "_demoNWapp._tcp", "_a._TCP", "_x-y-1._udp.", "_123456789012345._tcp"] {
            #expect(MDNSServiceType.isValid(type), "\(type)")
        }
        #expect(MDNSServiceType.normalized("_http._tcp.") == "_http._tcp")
        #expect(MDNSServiceType.normalized("_http._tcp") == "_http._tcp")
    }

    @Test("anything else is refused")
    func invalid() {
        for type in ["", "http._tcp", "_http", "_http._sctp", "_._tcp", "_1234567890123456._tcp", "_a b._tcp", "_x._tcp.local",
                     "_é._tcp", "not a type", "._tcp"] {
            #expect(!MDNSServiceType.isValid(type), "\(type)")
        }
    }
}
