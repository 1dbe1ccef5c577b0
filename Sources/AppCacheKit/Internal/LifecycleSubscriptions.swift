import Dispatch
import Foundation

/// What the cache subscribed to so as to follow the application's lifecycle; undone in `deinit`.
struct LifecycleSubscriptions {
    var observers: [any NSObjectProtocol] = []
    var sources: [any DispatchSourceProtocol] = []
    /// What else to stop (the network path monitor).
    var cancellations: [@Sendable () -> Void] = []

    /// Removes every observer and cancels every source.
    mutating func cancel() {
        for observer in observers {
            NotificationCenter.default.removeObserver(observer)
        }
        for source in sources {
            source.cancel()
        }
        for cancellation in cancellations {
            cancellation()
        }
        self = LifecycleSubscriptions()
    }
}
