import Foundation
import NetworkCore
import Testing

@testable import Network

/// `ProxyConfiguration` and the privacy context, turned into what the engine runs.
@Suite("Bridging.Proxy")
struct ProxyBridgingTests {
    @Test("SOCKSv5 and HTTP CONNECT carry address, credential and domain rules")
    func supportedKinds() {
        var socks = ProxyConfiguration(socksv5Proxy: .hostPort(host: "127.0.0.1", port: 1080))
        socks.allowFailover = true
        socks.excludedDomains = ["internal.example"]
        socks.applyCredential(username: "alice", password: "wonderland")
        let description = socks.proxyDescription
        #expect(description.kind == .socks5(proxyResolvesNames: true))
        #expect(description.server == .hostPort(host: "127.0.0.1", port: 1080, interfaceName: nil))
        #expect(description.credential == ProxyCredential(username: "alice", password: "wonderland"))
        #expect(description.allowFailover)
        #expect(description.excludedDomains == ["internal.example"])
        #expect(!description.description.contains("wonderland") && !description.description.contains("alice"))
        #expect(!socks.debugDescription.contains("wonderland"))

        var connect = ProxyConfiguration(httpCONNECTProxy: .hostPort(host: "proxy.example", port: 3128))
        connect.matchDomains = ["example.com"]
        #expect(connect.proxyDescription.kind == .httpCONNECT(tlsToProxy: false))
        #expect(connect.proxyDescription.matchDomains == ["example.com"])
        #expect(connect.proxyDescription.credential == nil)
        let secure = ProxyConfiguration(httpCONNECTProxy: .hostPort(host: "proxy.example", port: 443), tlsOptions: .init())
        #expect(secure.proxyDescription.kind == .httpCONNECT(tlsToProxy: true))
        let byURL = ProxyConfiguration(httpCONNECTProxy: .url(URL(string: "http://proxy.example:8080")!))
        #expect(byURL.proxyDescription.server == .hostPort(host: "proxy.example", port: 8080, interfaceName: nil))
    }

    @Test("relays, Oblivious HTTP and odd endpoints are kept as unsupported, not dropped")
    func unsupportedKinds() {
        let hop = ProxyConfiguration.RelayHop(http3RelayEndpoint: .hostPort(host: "relay.example", port: 443))
        guard case .unsupported = ProxyConfiguration(relayHops: [hop]).proxyDescription.kind else {
            Issue.record("relay")
            return
        }
        let ohttp = ProxyConfiguration(
            obliviousHTTPRelay: hop, relayResourcePath: "/", gatewayKeyConfig: Data(), matchDomains: ["a.example"])
        #expect(ohttp.proxyDescription.matchDomains == ["a.example"])
        guard case .unsupported = ProxyConfiguration(socksv5Proxy: .unix(path: "/tmp/socks")).proxyDescription.kind else {
            Issue.record("unix endpoint")
            return
        }
    }

    @Test("the parameters' privacy context supplies the list the selection uses")
    func parameters() throws {
        let parameters = NWParameters.tcp
        #expect(parameters.proxyDescriptions.isEmpty, "the default context has no proxies")
        let context = NWParameters.PrivacyContext(description: "proxied")
        context.proxyConfigurations = [ProxyConfiguration(socksv5Proxy: .hostPort(host: "127.0.0.1", port: 1080))]
        parameters.setPrivacyContext(context)
        let routes = try ProxySelection.routes(
            to: .hostPort(host: "example.com", port: 443, interfaceName: nil), transport: .tcp, secure: true,
            configured: parameters.proxyDescriptions, environment: ProxyEnvironment(["all_proxy": "http://env:1"]),
            preferNoProxies: parameters.preferNoProxies
        ).get()
        #expect(routes == [.proxy(ProxyDescription(
            kind: .socks5(proxyResolvesNames: true), server: .hostPort(host: "127.0.0.1", port: 1080, interfaceName: nil)))])
    }
}

/// Credentials never show in textual or reflected forms.
@Suite("Bridging.ProxyCredentials")
struct ProxyCredentialRedactionTests {
    @Test("interpolation, debugDescription and dump() hide user name and password")
    func redacted() {
        let configuration = ProxyConfiguration(httpCONNECTProxy: .hostPort(host: "proxy.example", port: 3128))
        configuration.applyCredential(username: "carol", password: "hunter2")
        var texts = [
            "\(configuration)", configuration.debugDescription, String(describing: configuration.credential),
            String(reflecting: configuration.credential), "\(configuration.proxyDescription)",
        ]
        var dumped = ""
        dump(configuration.proxyDescription, to: &dumped)
        dump(configuration.credential, to: &dumped)
        dump(configuration, to: &dumped)
        texts.append(dumped)
        for text in texts {
            #expect(!text.contains("hunter2") && !text.contains("carol"), "\(text)")
        }
    }
}
