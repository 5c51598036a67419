import NIOCore

/// The report's times as seconds, for `NWConnection.EstablishmentReport`.
extension FlowReport {
    /// Whether the flow became ready.
    package var isReady: Bool { readyTime != nil }

    /// From `start` to `ready`; 0 before it is ready.
    package var secondsToReady: Double {
        guard let start = startTime, let ready = readyTime else { return 0 }
        return Self.seconds(ready - start)
    }

    /// From `start` to the start of the attempt that won the race, when known.
    package var secondsToAttemptStart: Double? {
        guard let start = startTime, let attemptStart = attemptStartTime else { return nil }
        return Self.seconds(attemptStart - start)
    }

    /// The TCP handshake, when known.
    package var handshakeSeconds: Double? { handshakeDuration.map(Self.seconds) }

    /// The TLS handshake, when the stack has TLS.
    package var tlsHandshakeSeconds: Double? { tlsHandshakeDuration.map(Self.seconds) }

    /// `amount` in seconds.
    package static func seconds(_ amount: TimeAmount) -> Double {
        Double(amount.nanoseconds) / 1_000_000_000
    }
}

extension ResolutionReport {
    /// How long the resolution took, in seconds.
    package var durationSeconds: Double { FlowReport.seconds(duration) }

    /// The address the connection succeeded with.
    package var successfulAddress: FlowAddress? { successful.map(FlowAddress.init) }

    /// The address that was tried first.
    package var preferredAddress: FlowAddress? { preferred.map(FlowAddress.init) }
}
