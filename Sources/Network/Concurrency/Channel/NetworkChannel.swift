import Foundation
import NetworkCore

/// What ``NetworkConnection`` (and the streams of multiplexed connections) share: sends and
/// receives, whose form depends on the protocol at the top of the stack (`ApplicationProtocol`),
/// the connection's state, and its reports.
///
/// Sends and receives start the connection if it has not started, and wait while it
/// establishes. They throw the connection's error (an ``NWError``) if it fails. Cancelling the
/// task that waits in one of them ends the wait at once with `CancellationError` and cancels
/// the connection.
public class NetworkChannel<ApplicationProtocol: NetworkProtocolOptions>:
    CustomDebugStringConvertible, Equatable, Hashable, Identifiable, @unchecked Sendable
{
    // (`@unchecked`: the class is open to the module's subclasses; every stored property is an
    // immutable reference or a Sendable value, and the stack value is one of this module's
    // Sendable building blocks.)
    let core: ChannelCore
    /// The stack's top layer, as written: coders and layer settings come from it.
    let applicationProtocol: ApplicationProtocol

    /// The metadata type of a stream's receives (nil when the top protocol is not a stream):
    /// looked up once here, not with a conformance lookup per receive.
    let streamMetadataType: (any StreamMetadataMaking.Type)?

    init(core: ChannelCore, applicationProtocol: ApplicationProtocol) {
        self.core = core
        self.applicationProtocol = applicationProtocol
        streamMetadataType = ApplicationProtocol.Metadata.self as? any StreamMetadataMaking.Type
    }

    /// Channels are equal when they are the same object.
    public static func == (lhs: NetworkChannel<ApplicationProtocol>, rhs: NetworkChannel<ApplicationProtocol>) -> Bool {
        lhs === rhs
    }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// A stable identifier, the number log lines give the connection ("C12").
    public var id: String { "C\(core.flow.logID)" }

    /// The connection's number, endpoint and state.
    public var debugDescription: String {
        "[\(id) \(core.connection.endpoint.debugDescription) \(state)]"
    }

    /// Where the connection is in its life.
    public var state: NetworkChannel<ApplicationProtocol>.State { State(core.state) }

    /// The parameters the stack and its modifiers made.
    public var parameters: NWParameters { core.connection.parameters }

    /// The largest datagram one send can carry (for streams, the largest single write); 0 until
    /// the connection is ready.
    public var maximumDatagramSize: Int { core.connection.maximumDatagramSize }

    /// Connection-wide metadata of one protocol of the stack (TCP, TLS, UDP, IP or WebSocket).
    public func metadata(definition: NWProtocolDefinition) -> NWProtocolMetadata? {
        core.connection.metadata(definition: definition)
    }

    /// Starts the connection if needed, waits until it is ready, and reports how it was
    /// established.
    public func establishmentReport() async throws -> NWConnection.EstablishmentReport {
        try await core.waitUntilReady()
        let connection = core.connection
        return try await withCheckedThrowingContinuation { continuation in
            connection.requestEstablishmentReport(queue: ChannelCore.reportQueue) { report in
                if let report {
                    continuation.resume(returning: report)
                } else {
                    // (Ready moments ago, no longer: it failed or was cancelled meanwhile.)
                    continuation.resume(throwing: NWError.posix(.ENOTCONN))
                }
            }
        }
    }

    /// Starts the connection if needed, waits until it is ready, and reports the data it has
    /// carried since the first call of this method (the first call starts the measurement,
    /// so it reports an interval of about nothing).
    public func dataTransferReport() async throws -> NWConnection.DataTransferReport {
        try await core.waitUntilReady()
        let pending = core.transferMeasurement()
        return await withCheckedContinuation { continuation in
            pending.collect(queue: ChannelCore.reportQueue) { continuation.resume(returning: $0) }
        }
    }
}
