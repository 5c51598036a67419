/// An integer that connections send and receive as its raw bytes in network byte order
/// (big-endian): `send(_:endOfStream:)` and `receive(as:)` on streams.
public protocol NetworkFixedWidthInteger: FixedWidthInteger, Sendable {}

extension UInt8: NetworkFixedWidthInteger {}
extension UInt16: NetworkFixedWidthInteger {}
extension UInt32: NetworkFixedWidthInteger {}
extension UInt64: NetworkFixedWidthInteger {}
extension Int8: NetworkFixedWidthInteger {}
extension Int16: NetworkFixedWidthInteger {}
extension Int32: NetworkFixedWidthInteger {}
extension Int64: NetworkFixedWidthInteger {}
