import Foundation
#if canImport(os)
import os
#endif

/// The cache's messages and signposts in the system log (Apple platforms), under the subsystem
/// ``subsystem``: each event as a debug message (problems as errors), and the intervals of
/// fetches, decodes and disk batches as signposts, so that Instruments shows them beside the
/// app's own. Made only when ``AppCache/Configuration/logsToSystem`` asks; elsewhere there is
/// no system log, and ``AppCache/events`` is the way.
///
/// Thread safety: `Sendable`; `Logger` and `OSSignposter` may be used from any thread.
final class SystemLog: Sendable {
    /// The subsystem every message and signpost is logged under.
    static let subsystem = "net.appcache"

    #if canImport(os)
    private let logger: Logger
    private let signposter: OSSignposter
    #endif

    /// A system log for the caches of `category` (the root's last path component), or `nil`
    /// where the platform has none.
    static func make(category: String) -> SystemLog? {
        #if canImport(os)
        return SystemLog(category: category)
        #else
        return nil
        #endif
    }

    private init(category: String) {
        #if canImport(os)
        logger = Logger(subsystem: Self.subsystem, category: category)
        signposter = OSSignposter(subsystem: Self.subsystem, category: category)
        #endif
    }

    /// Logs `event`: a problem as an error, the rest at the debug level (kept in memory only,
    /// unless the device is being logged from).
    func log(_ event: CacheEvent) {
        #if canImport(os)
        let line = event.description
        if case .problemFound = event.kind {
            logger.error("\(line, privacy: .public)")
        } else {
            logger.debug("\(line, privacy: .public)")
        }
        #endif
    }

    /// An interval shown in Instruments, begun by ``begin(_:_:)``.
    struct Interval: @unchecked Sendable {
        #if canImport(os)
        fileprivate let state: OSSignpostIntervalState
        fileprivate let name: StaticString
        #endif
    }

    /// Begins the interval `name` ("fetch", "decode", "disk batch") about `label`.
    func begin(_ name: StaticString, _ label: String) -> Interval {
        #if canImport(os)
        let state = signposter.beginInterval(name, id: signposter.makeSignpostID(), "\(label, privacy: .public)")
        return Interval(state: state, name: name)
        #else
        return Interval()
        #endif
    }

    /// Ends an interval.
    func end(_ interval: Interval) {
        #if canImport(os)
        signposter.endInterval(interval.name, interval.state)
        #endif
    }
}
