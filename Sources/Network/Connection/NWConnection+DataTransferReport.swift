#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
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
            /// Transport payload bytes received (TCP: `tcpi_bytes_received`).
            public let receivedTransportByteCount: UInt64
            /// Duplicate transport bytes received (Linux counts duplicate segments, not bytes: 0).
            public let receivedTransportDuplicateByteCount: UInt64
            /// Out-of-order transport bytes received (Linux counts packets, not bytes: 0).
            public let receivedTransportOutOfOrderByteCount: UInt64
            /// Transport payload bytes sent.
            public let sentTransportByteCount: UInt64
            /// Bytes retransmitted during the interval (TCP: `tcpi_bytes_retrans`).
            public let retransmittedTransportByteCount: UInt64
            /// Smoothed round-trip time (TCP).
            public let transportSmoothedRTT: TimeInterval
            /// Minimum round-trip time seen (TCP: `tcpi_min_rtt`).
            public let transportMinimumRTT: TimeInterval
            /// Round-trip time variance (TCP).
            public let transportRTTVariance: TimeInterval
            /// IP packets received (TCP: segments received; UDP: not measured, 0).
            public let receivedIPPacketCount: UInt64
            /// IP packets sent (TCP: segments sent; UDP: not measured, 0).
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
        private let measurement: FlowTransferMeasurement

        init(connection: NWConnection) {
            self.connection = connection
            self.measurement = connection.flow.startTransferMeasurement()
        }

        /// Ends the interval and delivers the report on `queue`.
        @preconcurrency public func collect(
            queue: DispatchQueue, completion: @escaping @Sendable (NWConnection.DataTransferReport) -> Void
        ) {
            let connection = self.connection
            measurement.finish { begin, end in
                let interface = connection.currentPath?.availableInterfaces.first
                    ?? NWInterface(name: "lo", index: 1, type: .loopback)
                let path = Self.pathReport(interface: interface, begin: begin, end: end)
                let report = DataTransferReport(
                    duration: TimeInterval(end.uptimeNanoseconds &- begin.uptimeNanoseconds) / 1_000_000_000,
                    aggregatePathReport: path, pathReports: [path])
                queue.async { completion(report) }
            }
        }

        static func pathReport(
            interface: NWInterface, begin: FlowTransferCounters, end: FlowTransferCounters
        ) -> DataTransferReport.PathReport {
            let sent = end.sentBytes &- begin.sentBytes
            let received = end.receivedBytes &- begin.receivedBytes
            guard let a = begin.tcp, let b = end.tcp else {
                // UDP: every application byte is one transport byte; RTTs are unknown.
                return DataTransferReport.PathReport(
                    interface: interface,
                    receivedApplicationByteCount: received, sentApplicationByteCount: sent,
                    receivedTransportByteCount: received, receivedTransportDuplicateByteCount: 0,
                    receivedTransportOutOfOrderByteCount: 0, sentTransportByteCount: sent,
                    retransmittedTransportByteCount: 0, transportSmoothedRTT: 0, transportMinimumRTT: 0,
                    transportRTTVariance: 0, receivedIPPacketCount: 0, sentIPPacketCount: 0)
            }
            return DataTransferReport.PathReport(
                interface: interface,
                receivedApplicationByteCount: received, sentApplicationByteCount: sent,
                receivedTransportByteCount: b.bytesReceived &- a.bytesReceived,
                receivedTransportDuplicateByteCount: 0,
                receivedTransportOutOfOrderByteCount: 0,
                sentTransportByteCount: b.bytesSent &- a.bytesSent,
                retransmittedTransportByteCount: b.bytesRetransmitted &- a.bytesRetransmitted,
                transportSmoothedRTT: TimeInterval(b.smoothedRTT) / 1_000_000,
                transportMinimumRTT: TimeInterval(b.minimumRTT) / 1_000_000,
                transportRTTVariance: TimeInterval(b.rttVariance) / 1_000_000,
                receivedIPPacketCount: UInt64(b.segmentsIn &- a.segmentsIn),
                sentIPPacketCount: UInt64(b.segmentsOut &- a.segmentsOut))
        }
    }
}
