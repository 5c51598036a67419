import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Fetches a PAC script over plain HTTP with SwiftNIO: one `GET`, no redirects, a size cap and a
/// time limit.
///
/// Deliberately small: a PAC URL is configured by an administrator and points at an intranet
/// server or a local file; redirects and TLS are left out until a configuration needs them
/// (docs/pac.md).
enum PACHTTPFetcher {
    /// The body of a 200 response to `GET url`, at most `maximumSize` bytes, within `timeout`
    /// for the connection and again for the response.
    static func fetch(_ url: URL, maximumSize: Int, timeout: Double) async throws(PACError) -> [UInt8] {
        guard var host = url.host, !host.isEmpty else { throw .loadFailed("no host in \(url.absoluteString)") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? 80
        guard (1...65535).contains(port) else { throw .loadFailed("bad port in \(url.absoluteString)") }
        var target = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = url.query { target += "?\(query)" }

        var headers = HTTPHeaders()
        let hostField = host.contains(":") ? "[\(host)]" : host
        headers.add(name: "Host", value: port == 80 ? hostField : "\(hostField):\(port)")
        headers.add(name: "Accept", value: "application/x-ns-proxy-autoconfig, */*")
        headers.add(name: "Connection", value: "close")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)

        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = eventLoop.makePromise(of: [UInt8].self)
        let milliseconds = Int64(max(timeout, 0.001) * 1000)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.milliseconds(milliseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        PACHTTPResponseCollector(request: request, maximumSize: maximumSize, promise: promise))
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
        do {
            return try await promise.futureResult.get()
        } catch let error as PACError {
            throw error
        } catch {
            throw .loadFailed("\(url.absoluteString): \(error)")
        }
    }
}

/// Sends the request when the connection opens and collects the response body, failing as soon
/// as the status is not 200 or the body outgrows the cap.
final class PACHTTPResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let request: HTTPRequestHead
    private let maximumSize: Int
    private let promise: EventLoopPromise<[UInt8]>
    private var body: [UInt8] = []
    private var finished = false

    /// Completes `promise` with the body of the response to `request`.
    init(request: HTTPRequestHead, maximumSize: Int, promise: EventLoopPromise<[UInt8]>) {
        self.request = request
        self.maximumSize = maximumSize
        self.promise = promise
    }

    /// Sends the request as soon as the connection is up.
    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    /// Checks the status, enforces the size cap while the body arrives, completes at the end.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard head.status == .ok else {
                let location = head.headers.first(name: "Location").map { " (redirect to \($0) not followed)" } ?? ""
                finish(context, .failure(.loadFailed("HTTP status \(head.status.code)\(location)")))
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
            finish(context, .success(body))
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
    private func finish(_ context: ChannelHandlerContext, _ result: Result<[UInt8], PACError>) {
        guard !finished else { return }
        finished = true
        promise.completeWith(result.mapError { $0 as any Error })
        context.close(promise: nil)
    }
}
