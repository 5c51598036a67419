import Foundation

/// A classic ``NWProtocolFramer`` in a stack of the structured-concurrency API: messages go
/// through `T`'s implementation, each send with an optional ``NWProtocolFramer/Message``.
public struct Framer<T: FramerProtocol>: NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, @unchecked Sendable {
    public typealias BelowProtocol = TLS
    public typealias ContentType = Data
    public typealias LegacyMessage = NWProtocolFramer.Message

    /// What a received message reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol, @unchecked Sendable {
        /// The framer's message, with the values its `handleInput` set.
        public let message: NWProtocolFramer.Message?
        /// The classic metadata, the framer's message among it. (Made when asked for: most
        /// receivers never look, and an array per message showed in its profile.)
        public var other: [NWProtocolMetadata] { message.map { [$0] } ?? [] }
    }

    /// The framer's options: values set here reach every instance of the framer.
    // (A class the stack shares; `@unchecked` as the classic options are: they lock.)
    public var options: NWProtocolFramer.Options

    private let below: any StackLayer

    /// `T` over the stream `builder` makes.
    public init<BelowProtocol: StreamProtocol>(_ builder: () -> BelowProtocol) {
        options = NWProtocolFramer.Options(definition: T.definition)
        below = UnsupportedStackLayer.layer(builder())
    }

    /// `T` over datagrams.
    public init<BelowProtocol: DatagramProtocol>(_ builder: () -> BelowProtocol) {
        options = NWProtocolFramer.Options(definition: T.definition)
        below = UnsupportedStackLayer.layer(builder())
    }

    /// `T` (named again) over the stream `builder` makes.
    public init<BelowProtocol: StreamProtocol>(using type: T.Type, _ builder: () -> BelowProtocol) {
        self.init(builder)
    }

    /// `T` (named again) over datagrams.
    public init<BelowProtocol: DatagramProtocol>(using type: T.Type, _ builder: () -> BelowProtocol) {
        self.init(builder)
    }
}

extension Framer: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        plan.application.append(options.copyOptions())
        below.addLayers(to: &plan)
    }
}
