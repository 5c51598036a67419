/// What a layer settled on its way to ready, for the connection's metadata.
package struct StackLayerFacts: Sendable {
    package var webSocket: WebSocketHandshakeFacts?

    package init(webSocket: WebSocketHandshakeFacts? = nil) {
        self.webSocket = webSocket
    }
}
