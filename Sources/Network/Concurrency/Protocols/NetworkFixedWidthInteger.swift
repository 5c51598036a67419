/// An integer that connections send and receive as its raw bytes in network byte order
/// (big-endian): `send(_:endOfStream:)` and `receive(as:)` on streams.
public protocol NetworkFixedWidthInteger: FixedWidthInteger, Sendable {}

/// Sent and received as its raw big-endian bytes.
extension UInt8: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension UInt16: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension UInt32: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension UInt64: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension Int8: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension Int16: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension Int32: NetworkFixedWidthInteger {}
/// Sent and received as its raw big-endian bytes.
extension Int64: NetworkFixedWidthInteger {}
