/// Runs `handler` with a connection to `endpoint` over the stack `builder` writes, and closes
/// the connection when `handler` returns or throws (returning once it is closed), whoever else
/// still holds it.
public nonisolated(nonsending) func withNetworkConnection<ApplicationProtocol: OneToOneProtocol>(
    to endpoint: NWEndpoint, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol,
    _ handler: (NetworkConnection<ApplicationProtocol>) async throws -> Void
) async throws {
    try await withClosing(NetworkConnection(to: endpoint, using: builder), handler)
}

/// A multiplexed connection (QUIC) for the time `handler` runs.
public nonisolated(nonsending) func withNetworkConnection<ApplicationProtocol: MultiplexProtocol>(
    to endpoint: NWEndpoint, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol,
    _ handler: (NetworkConnection<ApplicationProtocol>) async throws -> Void
) async throws {
    try await withClosing(NetworkConnection(to: endpoint, using: builder), handler)
}

/// A multiplexed connection with the parameters `builder` makes, for the time `handler` runs.
public nonisolated(nonsending) func withNetworkConnection<ApplicationProtocol: MultiplexProtocol>(
    to endpoint: NWEndpoint, using builder: NWParametersBuilder<ApplicationProtocol>,
    _ handler: (NetworkConnection<ApplicationProtocol>) async throws -> Void
) async throws {
    try await withClosing(NetworkConnection(to: endpoint, using: builder), handler)
}

/// A connection with the parameters `builder` makes, for the time `handler` runs.
public nonisolated(nonsending) func withNetworkConnection<ApplicationProtocol: OneToOneProtocol>(
    to endpoint: NWEndpoint, using builder: NWParametersBuilder<ApplicationProtocol>,
    _ handler: (NetworkConnection<ApplicationProtocol>) async throws -> Void
) async throws {
    try await withClosing(NetworkConnection(to: endpoint, using: builder), handler)
}

/// Runs `handler` preferring the connection's event loop as its executor (nonisolated code in it
/// then runs on the loop's thread: a receive resumes it without a thread hop, and a send goes out
/// from there at once; code isolated to an actor still runs on the actor), as the connection's
/// scope (a cancellation of the task cancels the connection, see `ScopeTask`), then closes the
/// connection.
private nonisolated(nonsending) func withClosing<ApplicationProtocol>(
    _ connection: NetworkConnection<ApplicationProtocol>, _ handler: (NetworkConnection<ApplicationProtocol>) async throws -> Void
) async throws {
    do {
        try await withTaskExecutorPreference(connection.core.taskExecutor) {
            try await connection.core.scope.run(cancelling: connection.core) { try await handler(connection) }
        }
    } catch {
        await connection.closeAndWait()
        throw error
    }
    await connection.closeAndWait()
}
