/// Encodes and decodes the values of a ``Coder`` stack: makes one encoder and one decoder for
/// each connection. `.json` and `.propertyList` are built in; conform your own coder to use
/// another format.
public protocol NetworkCoder: Sendable {
    /// The decoder this coder makes.
    associatedtype Decoder: NetworkDecoder
    /// The encoder this coder makes.
    associatedtype Encoder: NetworkEncoder
    /// A coder with its default settings.
    init()
    /// A decoder for received values.
    func makeDecoder() -> Self.Decoder
    /// An encoder for sent values.
    func makeEncoder() -> Self.Encoder
}

extension NetworkCoder where Self == NetworkJSONCoder {
    /// JSON, with Foundation's `JSONEncoder` and `JSONDecoder`.
    public static var json: NetworkJSONCoder { NetworkJSONCoder() }
}

extension NetworkCoder where Self == NetworkPropertyListCoder {
    /// Property lists (binary), with Foundation's `PropertyListEncoder` and `PropertyListDecoder`.
    public static var propertyList: NetworkPropertyListCoder { NetworkPropertyListCoder() }
}
