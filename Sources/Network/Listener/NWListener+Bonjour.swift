import Foundation
import NetworkCore
import NetworkDNS

/// Advertising a listener's service: started when the listener is ready (the port is known),
/// stopped (with goodbyes) when it is cancelled or fails; the engine's events become
/// `serviceRegistrationUpdateHandler` calls on the listener's queue.
extension NWListener {
    /// Starts or stops advertising to match the state and the service now set.
    func advertiseIfReady() {
        let port = engine.port
        enum Step { case none, start(Service, UInt16), stop(Int) }
        let step = shared.withLock { shared -> Step in
            switch shared.state {
            case .ready:
                guard shared.advertisement == nil, let service = shared.service, let port else { return .none }
                return .start(service, UInt16(port))
            case .failed, .cancelled:
                guard let token = shared.advertisement else { return .none }
                shared.advertisement = nil
                return .stop(token)
            case .setup, .waiting:
                return .none
            }
        }
        switch step {
        case .none: break
        case .start(let service, let port): startAdvertising(service, port: port)
        case .stop(let token): MDNSEngine.shared.stopAdvertising(token)
        }
    }

    private func startAdvertising(_ service: Service, port: UInt16) {
        let txt = service.txtRecordObject?.attributes ?? DNSSDTXTAttributes()
        let token = MDNSEngine.shared.advertise(
            instance: service.name, type: service.type, domain: service.domain, port: port, txt: txt,
            noAutoRename: service.noAutoRename
        ) { [weak self] event in self?.advertisementEvent(event) }
        let stale = shared.withLock { shared -> Bool in
            // Cancelled, or advertising already, meanwhile: this one is not wanted.
            guard shared.state == .ready, shared.advertisement == nil else { return true }
            shared.advertisement = token
            return false
        }
        if stale { MDNSEngine.shared.stopAdvertising(token) }
    }

    /// The `service` setter: a TXT-only change is announced under the same name, any other
    /// change advertises anew.
    func serviceChanged(to service: Service?) {
        let (old, token) = shared.withLock { shared -> (Service?, Int?) in
            defer { shared.service = service }
            return (shared.service, shared.advertisement)
        }
        guard let token else {
            advertiseIfReady()
            return
        }
        if let old, let service, old.name == service.name, old.type == service.type, old.domain == service.domain,
            old.noAutoRename == service.noAutoRename
        {
            MDNSEngine.shared.updateAdvertisement(token, txt: service.txtRecordObject?.attributes ?? DNSSDTXTAttributes())
            return
        }
        shared.withLock { if $0.advertisement == token { $0.advertisement = nil } }
        MDNSEngine.shared.stopAdvertising(token)
        advertiseIfReady()
    }

    private func advertisementEvent(_ event: MDNSEngine.AdvertisementEvent) {
        let change: ServiceRegistrationChange
        switch event {
        case .added(let instance):
            change = .add(.service(name: instance.name, type: instance.type, domain: instance.domain, interface: nil))
        case .removed(let instance):
            change = .remove(.service(name: instance.name, type: instance.type, domain: instance.domain, interface: nil))
        case .failed(let error):
            shared.withLock { $0.advertisement = nil }
            engine.fail(error)
            return
        }
        deliver { [self] in
            let handler = shared.withLock { $0.serviceRegistrationUpdateHandler }
            handler?(change)
        }
    }
}
