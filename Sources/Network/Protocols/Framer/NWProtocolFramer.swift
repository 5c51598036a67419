/// A protocol of your own, written as a framer: it sits above TCP, TLS, UDP or DTLS in a
/// connection's protocol stack, turns the bytes below into messages on the way in and messages
/// into bytes on the way out.
///
/// Write a class that conforms to ``NWProtocolFramerImplementation``, make a
/// ``NWProtocolFramer/Definition`` for it, and put ``NWProtocolFramer/Options`` made from that
/// definition first in the parameters' `applicationProtocols`. Each connection gets its own
/// instance of your class, called on the connection's internal context through an
/// ``NWProtocolFramer/Instance``.
public class NWProtocolFramer: NWProtocol, @unchecked Sendable {}
