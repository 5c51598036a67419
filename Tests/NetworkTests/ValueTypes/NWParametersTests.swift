import Foundation
import NetworkSystem
import Testing

@testable import Network

@Suite struct ValueTypesNWParametersTests {
    @Test func defaults() {
        let params = NWParameters()
        #expect(params.requiredInterface == nil)
        #expect(params.requiredInterfaceType == .other)
        #expect(params.prohibitedInterfaces == nil)
        #expect(params.prohibitedInterfaceTypes == nil)
        #expect(!params.prohibitExpensivePaths)
        #expect(!params.prohibitConstrainedPaths)
        #expect(!params.allowUltraConstrainedPaths)
        #expect(!params.preferNoProxies)
        #expect(params.requiredLocalEndpoint == nil)
        #expect(!params.allowLocalEndpointReuse)
        #expect(!params.acceptLocalOnly)
        #expect(!params.includePeerToPeer)
        #expect(params.serviceClass == .bestEffort)
        #expect(params.multipathServiceType == .disabled)
        #expect(!params.allowFastOpen)
        #expect(params.expiredDNSBehavior == .systemDefault)
        #expect(!params.requiresDNSSECValidation)
        #expect(params.attribution == .developer)
        #expect(params.privacyContext === NWParameters.PrivacyContext.default)
        #expect(params.defaultProtocolStack.applicationProtocols.isEmpty)
        #expect(params.defaultProtocolStack.transportProtocol == nil)
        #expect(params.defaultProtocolStack.internetProtocol is NWProtocolIP.Options)
        #expect(params.debugDescription == "ip, attribution: developer")
    }

    @Test func presets() {
        let tcp = NWParameters.tcp
        #expect(tcp.defaultProtocolStack.transportProtocol is NWProtocolTCP.Options)
        #expect(tcp.defaultProtocolStack.applicationProtocols.isEmpty)
        #expect(tcp.debugDescription == "tcp/ip, attribution: developer")

        let tls = NWParameters.tls
        #expect(tls.defaultProtocolStack.transportProtocol is NWProtocolTCP.Options)
        #expect(tls.defaultProtocolStack.applicationProtocols.count == 1)
        #expect(tls.defaultProtocolStack.applicationProtocols.first is NWProtocolTLS.Options)
        #expect(tls.defaultProtocolStack.layerNames == ["tls", "tcp", "ip"])

        let udp = NWParameters.udp
        #expect(udp.defaultProtocolStack.transportProtocol is NWProtocolUDP.Options)
        #expect(udp.defaultProtocolStack.applicationProtocols.isEmpty)

        let dtls = NWParameters.dtls
        #expect(dtls.defaultProtocolStack.transportProtocol is NWProtocolUDP.Options)
        #expect(dtls.defaultProtocolStack.layerNames == ["tls", "udp", "ip"])

        // Each access gives a fresh object.
        #expect(NWParameters.tcp !== NWParameters.tcp)
        NWParameters.tcp.allowFastOpen = true
        #expect(!NWParameters.tcp.allowFastOpen)
    }

    @Test func initializersUseTheGivenOptions() throws {
        let tcpOptions = NWProtocolTCP.Options()
        tcpOptions.noDelay = true
        let tlsOptions = NWProtocolTLS.Options()
        let params = NWParameters(tls: tlsOptions, tcp: tcpOptions)
        #expect(params.defaultProtocolStack.transportProtocol === tcpOptions)
        #expect(params.defaultProtocolStack.applicationProtocols.first === tlsOptions)

        let udpOptions = NWProtocolUDP.Options()
        let datagram = NWParameters(dtls: nil, udp: udpOptions)
        #expect(datagram.defaultProtocolStack.transportProtocol === udpOptions)

        let raw = NWParameters(customIPProtocolNumber: 132)
        #expect(raw.customIPProtocolNumber == 132)
        #expect(raw.defaultProtocolStack.transportProtocol == nil)
    }

    @Test func settersAndDescription() throws {
        let params = NWParameters.tcp
        let lo = NWInterface(name: "lo", index: 1, type: .loopback)
        params.requiredInterface = lo
        params.requiredInterfaceType = .wifi
        params.prohibitedInterfaceTypes = [.cellular]
        params.prohibitExpensivePaths = true
        params.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: 5000)
        params.allowLocalEndpointReuse = true
        params.serviceClass = .background
        params.multipathServiceType = .handover
        params.allowFastOpen = true
        params.expiredDNSBehavior = .allow
        params.attribution = .user
        #expect(params.requiredInterface == lo)
        #expect(params.requiredInterfaceType == .wifi)
        #expect(params.prohibitedInterfaceTypes == [.cellular])
        #expect(params.serviceClass == .background)
        #expect(params.expiredDNSBehavior == .allow)
        #expect(params.debugDescription == "tcp/ip, interface: lo, interface type: wifi, prohibited types: cellular, "
            + "prohibit expensive, local: 127.0.0.1:5000, reuse local endpoint, service class: background, "
            + "multipath: handover, fast open, expired DNS: allow, attribution: user")
    }

    @Test("the required interface and local endpoint are set, kept and cleared independently, also in copies")
    func requiredOriginFields() {
        let params = NWParameters.tcp
        let lo = NWInterface(name: "lo", index: 1, type: .loopback)
        let local = NWEndpoint.hostPort(host: "127.0.0.1", port: 5000)
        params.requiredInterface = lo
        params.requiredLocalEndpoint = local
        let copy = params.copy()
        params.requiredInterface = nil
        #expect(params.requiredInterface == nil)
        #expect(params.requiredLocalEndpoint == local)
        #expect(copy.requiredInterface == lo, "a change to the original reached its copy")
        copy.requiredLocalEndpoint = nil
        #expect(copy.requiredInterface == lo)
        #expect(copy.requiredLocalEndpoint == nil)
        #expect(params.requiredLocalEndpoint == local, "a change to the copy reached the original")
        params.requiredLocalEndpoint = nil
        #expect(params.requiredInterface == nil && params.requiredLocalEndpoint == nil)
    }

    @Test func copyIsDeep() throws {
        let original = NWParameters.tls
        original.allowFastOpen = true
        original.serviceClass = .signaling
        let originalTCP = try #require(original.defaultProtocolStack.transportProtocol as? NWProtocolTCP.Options)
        originalTCP.noDelay = true
        originalTCP.keepaliveIdle = 30

        let copy = original.copy()
        #expect(copy !== original)
        #expect(copy.defaultProtocolStack !== original.defaultProtocolStack)
        #expect(copy.allowFastOpen)
        #expect(copy.serviceClass == .signaling)
        let copiedTCP = try #require(copy.defaultProtocolStack.transportProtocol as? NWProtocolTCP.Options)
        #expect(copiedTCP !== originalTCP)
        #expect(copiedTCP.noDelay)
        #expect(copiedTCP.keepaliveIdle == 30)
        #expect(copy.defaultProtocolStack.applicationProtocols.first is NWProtocolTLS.Options)
        #expect(copy.defaultProtocolStack.applicationProtocols.first !== original.defaultProtocolStack.applicationProtocols.first)
        #expect(copy.defaultProtocolStack.internetProtocol !== original.defaultProtocolStack.internetProtocol)

        // Mutating the copy leaves the original alone, and the other way round.
        copiedTCP.noDelay = false
        copiedTCP.enableKeepalive = true
        copy.allowFastOpen = false
        (copy.defaultProtocolStack.internetProtocol as! NWProtocolIP.Options).version = .v6
        #expect(originalTCP.noDelay)
        #expect(!originalTCP.enableKeepalive)
        #expect(original.allowFastOpen)
        #expect((original.defaultProtocolStack.internetProtocol as! NWProtocolIP.Options).version == .any)
        original.serviceClass = .background
        #expect(copy.serviceClass == .signaling)
    }

    @Test func internetProtocolMutationTakesEffect() throws {
        let params = NWParameters.tcp
        let ip = params.defaultProtocolStack.internetProtocol as! NWProtocolIP.Options
        ip.version = .v6
        ip.hopLimit = 7
        #expect((params.defaultProtocolStack.internetProtocol as! NWProtocolIP.Options).version == .v6)
        #expect(params.defaultProtocolStack.ipOptions.socketSettings.version == .v6)
        #expect(params.defaultProtocolStack.ipOptions.socketSettings.hopLimit == 7)

        // Assigning new IP options replaces them; nil and other kinds are ignored.
        let replacement = NWProtocolIP.Options()
        replacement.version = .v4
        params.defaultProtocolStack.internetProtocol = replacement
        #expect(params.defaultProtocolStack.internetProtocol === replacement)
        params.defaultProtocolStack.internetProtocol = nil
        params.defaultProtocolStack.internetProtocol = NWProtocolTCP.Options()
        #expect(params.defaultProtocolStack.internetProtocol === replacement)
    }

    @Test func stackIsShared() {
        let params = NWParameters()
        let tls = NWProtocolTLS.Options()
        params.defaultProtocolStack.transportProtocol = NWProtocolTCP.Options()
        params.defaultProtocolStack.applicationProtocols.insert(tls, at: 0)
        #expect(params.defaultProtocolStack.applicationProtocols.first === tls)
        #expect(params.debugDescription.hasPrefix("tls/tcp/ip"))
    }

    @Test func concurrentUseIsSafe() async {
        let params = NWParameters.tcp
        let tcp = params.defaultProtocolStack.transportProtocol as! NWProtocolTCP.Options
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 0..<500 {
                        tcp.keepaliveCount = worker * 1000 + round
                        params.allowFastOpen = round % 2 == 0
                        _ = params.copy()
                        _ = tcp.socketSettings
                        _ = params.debugDescription
                    }
                }
            }
        }
        #expect(tcp.keepaliveCount % 1000 == 499)
        #expect(!params.allowFastOpen)
    }

    @Test func serviceClassTrafficClass() {
        #expect(NWParameters.ServiceClass.bestEffort.trafficClass == .bestEffort)
        #expect(NWParameters.ServiceClass.background.trafficClass == .background)
        #expect(NWParameters.ServiceClass.interactiveVideo.trafficClass == .interactiveVideo)
        #expect(NWParameters.ServiceClass.interactiveVoice.trafficClass == .interactiveVoice)
        #expect(NWParameters.ServiceClass.responsiveData.trafficClass == .responsiveData)
        #expect(NWParameters.ServiceClass.signaling.trafficClass == .signaling)
    }

    @Test func privacyContext() throws {
        let context = NWParameters.PrivacyContext(description: "sandbox")
        #expect(context.debugDescription == "sandbox")
        #expect(!context.isLoggingDisabled)
        context.disableLogging()
        #expect(context.isLoggingDisabled)
        let generation = context.cacheGeneration
        context.flushCache()
        #expect(context.cacheGeneration == generation + 1)

        let url = try #require(URL(string: "https://dns.example/dns-query"))
        context.requireEncryptedNameResolution(true, fallbackResolver: .https(url, serverAddresses: [.hostPort(host: "192.0.2.53", port: 443)]))
        #expect(context.requiresEncryptedNameResolution)
        #expect(context.fallbackResolver?.debugDescription == "DoH https://dns.example/dns-query (192.0.2.53:443)")

        let proxy = ProxyConfiguration(socksv5Proxy: .hostPort(host: "127.0.0.1", port: 1080))
        context.proxyConfigurations = [proxy]
        #expect(context.proxyConfigurations.count == 1)

        let params = NWParameters.tcp
        params.setPrivacyContext(context)
        #expect(params.privacyContext === context)
        #expect(params.copy().privacyContext === context)
        #expect(params.debugDescription.hasSuffix("privacy context: sandbox"))
        #expect(NWParameters.PrivacyContext.default.debugDescription == "default")
    }

    @Test func proxyConfigurations() throws {
        var socks = ProxyConfiguration(socksv5Proxy: .hostPort(host: "127.0.0.1", port: 1080))
        #expect(!socks.allowFailover)
        #expect(socks.matchDomains.isEmpty)
        #expect(socks.excludedDomains.isEmpty)
        socks.allowFailover = true
        socks.excludedDomains = ["internal.example"]
        #expect(socks.debugDescription == "SOCKSv5 127.0.0.1:1080, failover allowed, excluded: internal.example")
        guard case .socksv5(let endpoint) = socks.kind else {
            Issue.record("wrong kind")
            return
        }
        #expect(endpoint == .hostPort(host: "127.0.0.1", port: 1080))

        #expect(socks.credential == nil)
        let copy = socks
        socks.applyCredential(username: "user", password: "secret")
        #expect(copy.credential == ProxyConfiguration.Credential(username: "user", password: "secret"))
        #expect(!socks.debugDescription.contains("secret"))

        let connect = ProxyConfiguration(httpCONNECTProxy: .hostPort(host: "proxy.example", port: 3128))
        #expect(connect.debugDescription == "HTTP CONNECT proxy.example:3128")
        let secureConnect = ProxyConfiguration(httpCONNECTProxy: .hostPort(host: "proxy.example", port: 443), tlsOptions: .init())
        #expect(secureConnect.debugDescription == "HTTPS CONNECT proxy.example:443")

        let hop = ProxyConfiguration.RelayHop(http3RelayEndpoint: .hostPort(host: "relay.example", port: 443))
        #expect(hop.debugDescription == "relay(h3 relay.example:443)")
        let relays = ProxyConfiguration(relayHops: [hop, .init(http2RelayEndpoint: .hostPort(host: "r2.example", port: 443))])
        #expect(relays.debugDescription == "relays[relay(h3 relay.example:443), relay(h2 r2.example:443)]")

        let ohttp = ProxyConfiguration(
            obliviousHTTPRelay: hop, relayResourcePath: "/relay", gatewayKeyConfig: Data([1, 2]),
            matchDomains: ["api.example"])
        #expect(ohttp.matchDomains == ["api.example"])
    }
}
