/// The storage of layers that keep nothing per connection.
public struct DefaultProtocolStorage: ConnectionStorage, Sendable {
    /// Empty storage.
    public init() {}
}
