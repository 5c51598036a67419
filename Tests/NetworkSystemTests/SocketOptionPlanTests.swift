#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import NetworkSystem

@Suite("SocketOptionPlan (pure)")
struct SocketOptionPlanTests {
    @Test func defaultsEmitNothing() {
        #expect(SocketOptionPlan.tcp(TCPSocketSettings()).isEmpty)
        #expect(SocketOptionPlan.tcpListener(TCPSocketSettings()).isEmpty)
        #expect(SocketOptionPlan.udp(UDPSocketSettings()).isEmpty)
        for f in [SocketFamily.inet, .inet6] {
            for d in [false, true] {
                #expect(SocketOptionPlan.ip(IPSocketSettings(), family: f, datagram: d).isEmpty)
            }
            #expect(SocketOptionPlan.trafficClass(.bestEffort, family: f).isEmpty)
            #expect(SocketOptionPlan.stream(tcp: .init(), ip: .init(), family: f).isEmpty)
            #expect(SocketOptionPlan.datagram(udp: .init(), ip: .init(), family: f).isEmpty)
        }
    }

    @Test func knobsWithoutALinuxEquivalentEmitNothing() {
        var t = TCPSocketSettings()
        t.noOptions = true
        t.retransmitFinDrop = true
        t.disableECN = true
        #expect(SocketOptionPlan.tcp(t).isEmpty)
        #expect(SocketOptionPlan.tcpListener(t).isEmpty)
    }

    @Test func ipv4IgnoresIPv6OnlyKnobs() {
        var i = IPSocketSettings()
        i.useMinimumMTU = true
        i.localAddressPreference = .temporary
        #expect(SocketOptionPlan.ip(i, family: .inet, datagram: false).isEmpty)
        #expect(SocketOptionPlan.ip(i, family: .inet, datagram: true).isEmpty)
    }

    @Test func multicastKnobsOnlyOnDatagramSockets() {
        var i = IPSocketSettings()
        i.disableMulticastLoopback = true
        #expect(SocketOptionPlan.ip(i, family: .inet, datagram: false).isEmpty)
        #expect(SocketOptionPlan.ip(i, family: .inet6, datagram: false).isEmpty)
        i.hopLimit = 5
        #expect(!SocketOptionPlan.ip(i, family: .inet, datagram: false).contains { $0.name == IP_MULTICAST_TTL })
    }

    @Test func listenerAndClientDiffer() {
        var t = TCPSocketSettings()
        t.enableFastOpen = true
        t.connectionTimeout = 5
        let client = SocketOptionPlan.tcp(t)
        let listener = SocketOptionPlan.tcpListener(t)
        #expect(client.map(\.name) == [TCP_SYNCNT, TCP_FASTOPEN_CONNECT])
        #expect(listener == [SocketOptionSetting(level: SocketLevel.tcp, name: TCP_FASTOPEN, value: 128)])
    }

    @Test(arguments: [
        (1, Int32(1)), (3, 1), (4, 2), (10, 3), (127, 6), (128, 7), (1_000_000, 127),
    ])
    func synRetriesExponentialKernel(timeout: Int, expected: Int32) {
        #expect(SocketOptionPlan.synRetries(forTimeout: timeout, kernel: KernelTCPTimers(synLinearTimeouts: 0)) == expected)
    }

    /// Linux 6.17+: the first tcp_syn_linear_timeouts (default 4) retries keep a 1 s timeout.
    @Test(arguments: [(2, Int32(1)), (5, 4), (6, 5), (11, 6), (12, 7)])
    func synRetriesLinearKernel(timeout: Int, expected: Int32) {
        #expect(SocketOptionPlan.synRetries(forTimeout: timeout, kernel: KernelTCPTimers(synLinearTimeouts: 4)) == expected)
    }

    @Test func mergedKeepsLastAndSmallestSegmentSize() {
        let a = SocketOptionSetting(level: SocketLevel.tcp, name: TCP_MAXSEG, value: 1220)
        let b = SocketOptionSetting(level: SocketLevel.tcp, name: TCP_MAXSEG, value: 1400)
        let c = SocketOptionSetting(level: SocketLevel.ip, name: IP_TTL, value: 3)
        let d = SocketOptionSetting(level: SocketLevel.ip, name: IP_TTL, value: 9)
        #expect(SocketOptionPlan.merged([a, c, b, d]) == [
            SocketOptionSetting(level: SocketLevel.tcp, name: TCP_MAXSEG, value: 1220), d,
        ])
    }

    @Test func dscpTable() {
        #expect(SocketOptionPlan.dscp(.bestEffort) == nil)
        #expect(SocketOptionPlan.dscp(.background) == 8)         // CS1
        #expect(SocketOptionPlan.dscp(.responsiveData) == 18)    // AF21
        #expect(SocketOptionPlan.dscp(.interactiveVideo) == 34)  // AF41
        #expect(SocketOptionPlan.dscp(.interactiveVoice) == 46)  // EF
        #expect(SocketOptionPlan.dscp(.signaling) == 24)         // CS3
        let voice = SocketOptionPlan.trafficClass(.interactiveVoice, family: .inet)
        #expect(voice == [
            SocketOptionSetting(level: SocketLevel.ip, name: IP_TOS, value: 0xB8),
            SocketOptionSetting(level: SocketLevel.socket, name: SO_PRIORITY, value: 6),
        ])
        // No class needs CAP_NET_ADMIN (SO_PRIORITY above 6 would).
        for c in [TrafficClass.background, .responsiveData, .interactiveVideo, .interactiveVoice, .signaling] {
            #expect(SocketOptionPlan.priority(c)! <= 6)
        }
    }

    @Test func connectionDropTimeOverflowClampsToInt32() {
        var t = TCPSocketSettings()
        t.connectionDropTime = Int.max
        #expect(SocketOptionPlan.tcp(t) == [SocketOptionSetting(level: SocketLevel.tcp, name: TCP_USER_TIMEOUT, value: Int32.max)])
    }
}
