/// The close handshake (RFC 6455 §7): each side sends one close frame, and the connection ends
/// once both have. One `mutating` method per event, returning what to do; no I/O.
package struct WebSocketCloseHandshake: Sendable {
    package enum State: Equatable, Sendable {
        case open
        /// We sent our close frame and wait for the peer's.
        case closeSent
        /// Both close frames crossed (or we gave up): nothing more is sent.
        case closed
    }

    /// What to do after an event.
    package struct Actions: Equatable, Sendable {
        /// Send this close frame.
        package var send: WebSocketClosePayload?
        /// Close the transport (after writing what is queued).
        package var closeTransport: Bool

        package init(send: WebSocketClosePayload? = nil, closeTransport: Bool = false) {
            self.send = send
            self.closeTransport = closeTransport
        }
    }

    package private(set) var state = State.open

    package init() {}

    /// Whether messages may still be sent.
    package var canSend: Bool { state == .open }

    /// The application sends a close message (or cancels, or ends its side).
    package mutating func closeRequested(_ payload: WebSocketClosePayload) -> Actions {
        guard state == .open else { return Actions() }
        state = .closeSent
        return Actions(send: payload)
    }

    /// The peer's close frame arrived: answer with the same code (none when it gave none) unless
    /// we closed first; either way the handshake is over.
    package mutating func peerClosed(_ payload: WebSocketClosePayload) -> Actions {
        switch state {
        case .open:
            state = .closed
            return Actions(send: WebSocketClosePayload(code: payload.code), closeTransport: true)
        case .closeSent:
            state = .closed
            return Actions(closeTransport: true)
        case .closed:
            return Actions()
        }
    }

    /// We end the connection for a failure: tell the peer why (if we still may) and close.
    package mutating func failed(_ failure: WebSocketFailure) -> Actions {
        let wasOpen = state == .open
        state = .closed
        return Actions(send: wasOpen ? WebSocketClosePayload(code: failure.closeCode) : nil, closeTransport: true)
    }
}
