import Foundation
import NetworkSystem
import Testing

@testable import Network

@Suite struct ValueTypesProtocolOptionsTests {
    @Test func definitions() {
        #expect(NWProtocolTCP.definition.name == "tcp")
        #expect(NWProtocolUDP.definition.name == "udp")
        #expect(NWProtocolIP.definition.name == "ip")
        #expect(NWProtocolTLS.definition.name == "tls")
        #expect(NWProtocolTCP.definition.debugDescription == "tcp")
        #expect(NWProtocolTCP.definition == NWProtocolDefinition(name: "tcp"))
        #expect(NWProtocolTCP.definition != NWProtocolUDP.definition)
        #expect(NWProtocolTCP.Options().definition == NWProtocolTCP.definition)
        #expect(NWProtocolTLS.Options().definition == NWProtocolTLS.definition)
    }

    @Test func tcpOptionsDefaultsAndSnapshot() {
        let options = NWProtocolTCP.Options()
        #expect(options.socketSettings == TCPSocketSettings())
        #expect(!options.noDelay)
        #expect(options.keepaliveCount == 0)
        #expect(options.connectionTimeout == 0)

        options.noDelay = true
        options.noPush = true
        options.noOptions = true
        options.enableKeepalive = true
        options.keepaliveCount = 3
        options.keepaliveIdle = 10
        options.keepaliveInterval = 5
        options.maximumSegmentSize = 1200
        options.connectionTimeout = 7
        options.persistTimeout = 8
        options.connectionDropTime = 9
        options.retransmitFinDrop = true
        options.disableAckStretching = true
        options.enableFastOpen = true
        options.disableECN = true

        var expected = TCPSocketSettings()
        expected.noDelay = true
        expected.noPush = true
        expected.noOptions = true
        expected.enableKeepalive = true
        expected.keepaliveCount = 3
        expected.keepaliveIdle = 10
        expected.keepaliveInterval = 5
        expected.maximumSegmentSize = 1200
        expected.connectionTimeout = 7
        expected.persistTimeout = 8
        expected.connectionDropTime = 9
        expected.retransmitFinDrop = true
        expected.disableAckStretching = true
        expected.enableFastOpen = true
        expected.disableECN = true
        #expect(options.socketSettings == expected)
        #expect(options.keepaliveIdle == 10)

        // A snapshot does not follow later changes.
        let snapshot = options.socketSettings
        options.keepaliveIdle = 99
        #expect(snapshot.keepaliveIdle == 10)
        #expect(options.socketSettings.keepaliveIdle == 99)
    }

    @Test func ipOptionsSnapshot() {
        let options = NWProtocolIP.Options()
        #expect(options.version == .any)
        #expect(options.localAddressPreference == .default)
        #expect(options.socketSettings == IPSocketSettings())
        options.version = .v4
        options.hopLimit = 64
        options.useMinimumMTU = true
        options.disableFragmentation = true
        options.shouldCalculateReceiveTime = true
        options.localAddressPreference = .temporary
        options.disableMulticastLoopback = true
        let settings = options.socketSettings
        #expect(settings.version == .v4)
        #expect(settings.hopLimit == 64)
        #expect(settings.useMinimumMTU)
        #expect(settings.disableFragmentation)
        #expect(settings.shouldCalculateReceiveTime)
        #expect(settings.localAddressPreference == .temporary)
        #expect(settings.disableMulticastLoopback)
        options.version = .v6
        options.localAddressPreference = .stable
        #expect(options.version == .v6)
        #expect(options.socketSettings.version == .v6)
        #expect(options.socketSettings.localAddressPreference == .stable)
    }

    @Test func udpOptionsSnapshot() {
        let options = NWProtocolUDP.Options()
        #expect(!options.preferNoChecksum)
        options.preferNoChecksum = true
        #expect(options.socketSettings.preferNoChecksum)
        let copy = options.copyOptions() as! NWProtocolUDP.Options
        copy.preferNoChecksum = false
        #expect(options.preferNoChecksum)
    }

    @Test func metadata() {
        let ip = NWProtocolIP.Metadata()
        #expect(ip.definition == NWProtocolIP.definition)
        #expect(ip.ecn == .nonECT)
        #expect(ip.serviceClass == .bestEffort)
        #expect(ip.receiveTime == 0)
        ip.ecn = .ce
        ip.serviceClass = .interactiveVoice
        ip.receiveTime = 12345
        #expect(ip.ecn == .ce)
        #expect(ip.serviceClass == .interactiveVoice)
        #expect(ip.receiveTime == 12345)
        let received = NWProtocolIP.Metadata(ecn: .ect1, receiveTime: 77)
        #expect(received.ecn == .ect1)
        #expect(received.receiveTime == 77)

        let tcp = NWProtocolTCP.Metadata(availableReceiveBuffer: 10, availableSendBuffer: 20)
        #expect(tcp.definition == NWProtocolTCP.definition)
        #expect(tcp.availableReceiveBuffer == 10)
        #expect(tcp.availableSendBuffer == 20)
        #expect(tcp.maximumPacingRateBytesPerSecond == nil)

        #expect(NWProtocolUDP.Metadata().definition == NWProtocolUDP.definition)
        #expect(NWProtocolTLS.Metadata(sec_protocol_metadata_t(negotiatedProtocol: nil, negotiatedVersion: nil, peerCertificates: [], serverName: nil)).definition == NWProtocolTLS.definition)

        // Lookup by definition, as ContentContext.protocolMetadata(definition:) will do it.
        let all: [NWProtocolMetadata] = [NWProtocolUDP.Metadata(), ip, tcp]
        #expect(all.first { $0.definition == NWProtocolIP.definition } === ip)
        #expect(all.first { $0.definition == NWProtocolIP.definition } as? NWProtocolIP.Metadata != nil)
    }

    @Test func pacingRateReachesTheEngine() {
        let seen = SeenRates()
        let tcp = NWProtocolTCP.Metadata(availableReceiveBuffer: 0, availableSendBuffer: 0) { seen.append($0) }
        tcp.setMaximumPacingRateBytesPerSecond(1_000_000)
        tcp.setMaximumPacingRateBytesPerSecond(nil)
        #expect(seen.values == [1_000_000, nil])
        #expect(tcp.maximumPacingRateBytesPerSecond == nil)
        tcp.setMaximumPacingRateBytesPerSecond(5)
        #expect(tcp.maximumPacingRateBytesPerSecond == 5)
    }
}

import NetworkSync

private final class SeenRates: Sendable {
    private let storage = Lock<[UInt64?]>([])
    func append(_ value: UInt64?) { storage.withLock { $0.append(value) } }
    var values: [UInt64?] { storage.withLock { $0 } }
}
