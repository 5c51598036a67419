import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NetworkDNS

/// Fetches a PAC script over HTTP or HTTPS with SwiftNIO: `GET`, a size cap, a time limit per
/// request, and up to `maximumRedirects` redirects (never from `https` down to `http`).
///
/// HTTPS goes through the caller's `PACTLSClient` (the engine's TLS stack, which verifies like
/// any TLS connection of this package); without one, `https://` fails. The request is written
/// only once the handshake, host-name check included, has succeeded.
enum PACHTTPFetcher {
    /// Redirects followed before giving up (browsers allow about 20; a PAC URL should need one).
    static let maximumRedirects = 5

    /// The body of the 200 response that `GET url` leads to, at most `maximumSize` bytes, each
    /// request within `timeout` for the connection and again for the response.
    static func fetch(
        _ url: URL, maximumSize: Int, timeout: Double, tls: (any PACTLSClient)?
    ) async throws(PACError) -> [UInt8] {
        var current = url
        for _ in 0...maximumRedirects {
            switch try await fetchOnce(current, maximumSize: maximumSize, timeout: timeout, tls: tls) {
            case .body(let body):
                return body
            case .redirect(let location):
                current = try redirectTarget(location, from: current)
            }
        }
        throw .loadFailed("more than \(maximumRedirects) redirects from \(url.absoluteString)")
    }

    /// Where a `Location` header leads from `url`: relative references are resolved; only
    /// `http` and `https` are followed, and an `https` URL never leads to `http`.
    static func redirectTarget(_ location: String, from url: URL) throws(PACError) -> URL {
        guard let target = URL(string: location, relativeTo: url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { throw .loadFailed("unusable redirect to \(location) from \(url.absoluteString)") }
        if url.scheme?.lowercased() == "https" && scheme == "http" {
            throw .loadFailed("refused redirect from https to http (\(target.absoluteString))")
        }
        return target
    }

    /// What one request gave.
    enum Outcome: Sendable {
        case body([UInt8])
        case redirect(String)
    }

    private static func fetchOnce(
        _ url: URL, maximumSize: Int, timeout: Double, tls: (any PACTLSClient)?
    ) async throws(PACError) -> Outcome {
        guard let named = url.host, !named.isEmpty else { throw .loadFailed("no host in \(url.absoluteString)") }
        let host = named.hasPrefix("[") && named.hasSuffix("]") ? String(named.dropFirst().dropLast()) : named
        let secure = url.scheme?.lowercased() == "https"
        // Checked before connecting: without a TLS client there is nothing to talk to the server with.
        if secure && tls == nil { throw .loadFailed("no TLS client for \(url.absoluteString)") }
        let port = url.port ?? (secure ? 443 : 80)
        guard (1...65535).contains(port) else { throw .loadFailed("bad port in \(url.absoluteString)") }
        var target = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = url.query { target += "?\(query)" }

        var headers = HTTPHeaders()
        let hostField = HostAuthority.host(host)
        headers.add(name: "Host", value: port == (secure ? 443 : 80) ? hostField : "\(hostField):\(port)")
        headers.add(name: "Accept", value: "application/x-ns-proxy-autoconfig, */*")
        headers.add(name: "Connection", value: "close")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)

        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = eventLoop.makePromise(of: Outcome.self)
        let milliseconds = Int64(max(timeout, 0.001) * 1000)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.milliseconds(milliseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        PACHTTPResponseCollector(maximumSize: maximumSize, promise: promise))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            throw .loadFailed("cannot connect to \(hostField):\(port): \(error)")
        }
        let deadline = eventLoop.scheduleTask(in: .milliseconds(milliseconds)) {
            promise.fail(PACError.loadFailed("no complete response from \(url.absoluteString) within \(timeout) s"))
        }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        eventLoop.execute {
            // Over TLS, the request leaves only after the handshake and the host-name check.
            let ready: EventLoopFuture<Void>
            if secure, let tls {
                ready = tls.startClient(on: channel, hostName: host)
            } else {
                ready = eventLoop.makeSucceededVoidFuture()
            }
            ready.whenComplete { result in
                switch result {
                case .success:
                    channel.write(HTTPClientRequestPart.head(request), promise: nil)
                    channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
                case .failure(let error):
                    promise.fail(PACError.loadFailed("TLS with \(hostField):\(port): \(error)"))
                }
            }
        }
        do {
            return try await promise.futureResult.get()
        } catch let error as PACError {
            throw error
        } catch {
            throw .loadFailed("\(url.absoluteString): \(error)")
        }
    }
}

/// Collects the response body, failing as soon as the status is neither 200 nor a redirect, or
/// the body outgrows the cap. (The fetcher writes the request.)
final class PACHTTPResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let maximumSize: Int
    private let promise: EventLoopPromise<PACHTTPFetcher.Outcome>
    private var body: [UInt8] = []
    private var finished = false

    /// Completes `promise` with the response's body, or where it redirects to.
    init(maximumSize: Int, promise: EventLoopPromise<PACHTTPFetcher.Outcome>) {
        self.maximumSize = maximumSize
        self.promise = promise
    }

    /// Checks the status, enforces the size cap while the body arrives, completes at the end.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            switch head.status.code {
            case 200:
                break
            case 301, 302, 303, 307, 308:
                guard let location = head.headers.first(name: "Location") else {
                    finish(context, .failure(.loadFailed("HTTP status \(head.status.code) without a Location")))
                    return
                }
                finish(context, .success(.redirect(location)))
                return
            default:
                finish(context, .failure(.loadFailed("HTTP status \(head.status.code)")))
                return
            }
            if let declared = head.headers.first(name: "Content-Length").flatMap(Int.init), declared > maximumSize {
                finish(context, .failure(.scriptTooLarge(limit: maximumSize)))
            }
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= maximumSize else {
                finish(context, .failure(.scriptTooLarge(limit: maximumSize)))
                return
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            finish(context, .success(.body(body)))
        }
    }

    /// A connection that closes before the response ended is a failed load.
    func channelInactive(context: ChannelHandlerContext) {
        finish(context, .failure(.loadFailed("the server closed the connection before the response ended")))
        context.fireChannelInactive()
    }

    /// Any pipeline error fails the load with its description.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(context, .failure(.loadFailed("\(error)")))
    }

    /// Completes the promise once and closes the connection.
    private func finish(_ context: ChannelHandlerContext, _ result: Result<PACHTTPFetcher.Outcome, PACError>) {
        guard !finished else { return }
        finished = true
        promise.completeWith(result.mapError { $0 as any Error })
        context.close(promise: nil)
    }
}
