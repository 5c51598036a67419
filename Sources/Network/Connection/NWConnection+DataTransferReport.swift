#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import NIOCore
import NetworkCore

extension NWConnection {
    /// Data moved over a connection during a measured interval.
    public struct DataTransferReport: CustomDebugStringConvertible, Sendable {
        /// Counters for one path (one interface) of the connection.
        public struct PathReport: Sendable {
            /// The interface the path used.
            public let interface: NWInterface
            /// Application bytes received.
            public let receivedApplicationByteCount: UInt64
            /// Application bytes sent.
            public let sentApplicationByteCount: UInt64
            /// Transport payload bytes received (TCP: equal to the application bytes).
            public let receivedTransportByteCount: UInt64
            /// Duplicate transport bytes received (not measured on Linux: 0).
            public let receivedTransportDuplicateByteCount: UInt64
            /// Out-of-order transport bytes received (not measured on Linux: 0).
            public let receivedTransportOutOfOrderByteCount: UInt64
            /// Transport payload bytes sent.
            public let sentTransportByteCount: UInt64
            /// Bytes retransmitted during the interval (TCP: retransmitted segments × MSS).
            public let retransmittedTransportByteCount: UInt64
            /// Smoothed round-trip time (TCP).
            public let transportSmoothedRTT: TimeInterval
            /// Minimum round-trip time seen (TCP; the smoothed value where the kernel gives no minimum).
            public let transportMinimumRTT: TimeInterval
            /// Round-trip time variance (TCP).
            public let transportRTTVariance: TimeInterval
            /// IP packets received (not measured: 0).
            public let receivedIPPacketCount: UInt64
            /// IP packets sent (not measured: 0).
            public let sentIPPacketCount: UInt64
            /// The radio technology of the interface; nil on Linux, where it is not known.
            public var radioType: NWInterface.RadioType? { nil }
        }

        /// Length of the measured interval.
        public let duration: TimeInterval
        /// All paths added together.
        public let aggregatePathReport: PathReport
        /// One report per path used.
        public let pathReports: [PathReport]

        /// A readable summary.
        public var debugDescription: String {
            let a = aggregatePathReport
            return "Data transfer report: \(String(format: "%.3f", duration))s, sent \(a.sentApplicationByteCount) B, received \(a.receivedApplicationByteCount) B, srtt \(String(format: "%.6f", a.transportSmoothedRTT))s"
        }
    }

    /// A data-transfer measurement in progress; collect it to get the report.
    public final class PendingDataTransferReport: Sendable {
        private let connection: NWConnection
        private let start: EventLoopFuture<Counters>

        struct Counters: Sendable {
            var time: NIODeadline
            var sent: UInt64
            var received: UInt64
            var retransmits: UInt32
        }

        init(connection: NWConnection) {
            self.connection = connection
            self.start = Self.counters(connection)
        }

        /// Ends the interval and delivers the report on `queue`.
        @preconcurrency public func collect(
            queue: DispatchQueue, completion: @escaping @Sendable (NWConnection.DataTransferReport) -> Void
        ) {
            let connection = self.connection
            start.and(Self.counters(connection)).and(Self.tcpInfo(connection)).whenComplete { result in
                guard case .success(let ((begin, end), info)) = result else { return }
                let interface = connection.currentPath?.availableInterfaces.first
                    ?? NWInterface(name: "lo", index: 1, type: .loopback)
                let sent = end.sent - begin.sent
                let received = end.received - begin.received
                let isTCP = connection.flow.transportKind == .tcp
                let retransmittedSegments: UInt32 = info.map { $0.tcpi_total_retrans &- begin.retransmits } ?? 0
                let mss: UInt32 = info?.tcpi_snd_mss ?? 0
                let retransmitted = UInt64(retransmittedSegments) * UInt64(mss)
                let srtt = TimeInterval(info?.tcpi_rtt ?? 0) / 1_000_000
                let path = DataTransferReport.PathReport(
                    interface: interface,
                    receivedApplicationByteCount: received, sentApplicationByteCount: sent,
                    receivedTransportByteCount: received, receivedTransportDuplicateByteCount: 0,
                    receivedTransportOutOfOrderByteCount: 0, sentTransportByteCount: sent,
                    retransmittedTransportByteCount: isTCP ? retransmitted : 0,
                    transportSmoothedRTT: srtt, transportMinimumRTT: srtt,
                    transportRTTVariance: TimeInterval(info?.tcpi_rttvar ?? 0) / 1_000_000,
                    receivedIPPacketCount: 0, sentIPPacketCount: 0)
                let report = DataTransferReport(
                    duration: EstablishmentReport.seconds(end.time - begin.time),
                    aggregatePathReport: path, pathReports: [path])
                queue.async { completion(report) }
            }
        }

        private static func counters(_ connection: NWConnection) -> EventLoopFuture<Counters> {
            connection.flow.inspect { snapshot in
                Counters(time: .now(), sent: snapshot.report.sentBytes, received: snapshot.report.receivedBytes, retransmits: 0)
            }.and(tcpInfo(connection)).map { counters, info in
                var counters = counters
                counters.retransmits = info?.tcpi_total_retrans ?? 0
                return counters
            }
        }

        /// The kernel's TCP_INFO for the connection's socket, nil for other transports.
        private static func tcpInfo(_ connection: NWConnection) -> EventLoopFuture<tcp_info?> {
            let flow = connection.flow
            return flow.inspect { $0 }.flatMap { snapshot -> EventLoopFuture<tcp_info?> in
                guard !snapshot.isDatagram, let provider = snapshot.channel as? SocketOptionProvider else {
                    return flow.eventLoop.makeSucceededFuture(nil)
                }
                let future: EventLoopFuture<tcp_info> = provider.unsafeGetSocketOption(
                    level: NIOBSDSocket.OptionLevel(rawValue: Int32(IPPROTO_TCP)),
                    name: NIOBSDSocket.Option(rawValue: TCP_INFO))
                return future.map { Optional($0) }.recover { _ in nil }
            }
        }
    }
}
