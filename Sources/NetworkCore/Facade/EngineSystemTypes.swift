import NetworkSystem

// The system types that are the engine's own vocabulary (socket settings it applies, interfaces
// and routes its path evaluation works with), under the names the `Network` module uses, so
// that the facade depends on the engine alone.

/// TCP socket settings the engine applies.
package typealias TCPSocketSettings = NetworkSystem.TCPSocketSettings
/// UDP socket settings the engine applies.
package typealias UDPSocketSettings = NetworkSystem.UDPSocketSettings
/// IP socket settings the engine applies.
package typealias IPSocketSettings = NetworkSystem.IPSocketSettings
/// A service class, as the engine marks traffic.
package typealias TrafficClass = NetworkSystem.TrafficClass
/// The kind of a network interface.
package typealias SystemInterfaceType = NetworkSystem.SystemInterfaceType
/// A network interface as path evaluation sees it.
package typealias SystemInterface = NetworkSystem.SystemInterface
/// A route as path evaluation sees it.
package typealias SystemRoute = NetworkSystem.SystemRoute
