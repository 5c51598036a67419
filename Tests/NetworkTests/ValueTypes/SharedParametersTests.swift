import Foundation
import NetworkSystem
import Testing

@testable import Network

/// `PlainParametersKey` and `SharedParameters`: connections made from equal plain parameters
/// share one copy; anything beyond socket settings keeps its own object.
@Suite struct ValueTypesSharedParametersTests {
    private static func tcp(noDelay: Bool, keepaliveIdle: Int = 0) -> NWParameters {
        let options = NWProtocolTCP.Options()
        options.noDelay = noDelay
        options.keepaliveIdle = keepaliveIdle
        return NWParameters(tls: nil, tcp: options)
    }

    @Test func plainParametersHaveAKeyOfTheirSettings() throws {
        let key = try #require(PlainParametersKey(Self.tcp(noDelay: true)))
        var settings = TCPSocketSettings()
        settings.noDelay = true
        #expect(key.transport == .tcp(settings))
        #expect(key.ip == IPSocketSettings())
        #expect(PlainParametersKey(Self.tcp(noDelay: true)) == key)
        #expect(PlainParametersKey(Self.tcp(noDelay: false)) != key)
        #expect(PlainParametersKey(.udp)?.transport == .udp(UDPSocketSettings()))
        let v4 = Self.tcp(noDelay: true)
        (v4.defaultProtocolStack.internetProtocol as! NWProtocolIP.Options).version = .v4
        #expect(PlainParametersKey(v4) != key)
    }

    @Test func parametersThatSayMoreHaveNoKey() {
        #expect(PlainParametersKey(.tls) == nil)
        #expect(PlainParametersKey(NWParameters()) == nil)
        let preference = NWParameters.tcp
        preference.prohibitExpensivePaths = true
        #expect(PlainParametersKey(preference) == nil)
        let interface = NWParameters.tcp
        interface.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: 1234)
        #expect(PlainParametersKey(interface) == nil)
        let context = NWParameters.tcp
        context.setPrivacyContext(NWParameters.PrivacyContext(description: "shared-parameters-test"))
        #expect(PlainParametersKey(context) == nil)
        let changedBack = NWParameters.tcp
        changedBack.prohibitExpensivePaths = true
        changedBack.prohibitExpensivePaths = false
        #expect(PlainParametersKey(changedBack) != nil)
    }

    @Test func equalParametersShareOneCopyAndAChangeMakesAnother() throws {
        let first = Self.tcp(noDelay: true, keepaliveIdle: 4711)
        let shared = try #require(SharedParameters.shared(for: first))
        #expect(shared !== first)
        #expect(SharedParameters.contains(shared))
        #expect(!SharedParameters.contains(first))
        #expect(SharedParameters.shared(for: Self.tcp(noDelay: true, keepaliveIdle: 4711)) === shared)
        let changed = Self.tcp(noDelay: true, keepaliveIdle: 4711)
        (changed.defaultProtocolStack.transportProtocol as! NWProtocolTCP.Options).keepaliveIdle = 4712
        let other = try #require(SharedParameters.shared(for: changed))
        #expect(other !== shared)
        // The shared copy is independent of the object it was made from.
        (first.defaultProtocolStack.transportProtocol as! NWProtocolTCP.Options).keepaliveIdle = 1
        #expect((shared.defaultProtocolStack.transportProtocol as! NWProtocolTCP.Options).keepaliveIdle == 4711)
        #expect(SharedParameters.shared(for: .tls) == nil)
    }

    @Test func aConnectionAnswersACopyOfSharedParameters() {
        let given = Self.tcp(noDelay: true, keepaliveIdle: 4713)
        let connection = NWConnection(host: "127.0.0.1", port: 9, using: given)
        let answered = connection.parameters
        #expect(answered !== given)
        #expect(answered !== connection.parameters)
        #expect(PlainParametersKey(answered) == PlainParametersKey(given))
        #expect(answered.debugDescription == given.debugDescription)
        // Changing the answer changes nothing the connection or others see.
        answered.prohibitExpensivePaths = true
        #expect(!connection.parameters.prohibitExpensivePaths)

        let tls = NWParameters.tls
        #expect(NWConnection(host: "127.0.0.1", port: 9, using: tls).parameters === tls)
    }
}
