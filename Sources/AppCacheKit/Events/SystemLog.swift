import Foundation
// The os overlay of the SDKs Swift 6 builds with (Xcode 16 and later; version 1034 is the iOS
// 16.5 SDK's, whose interface a Swift 6 compiler cannot rebuild). Scripts/typecheck-swiftui-standin
// checks this code against that SDK with its os API notes patched (APPCACHE_TYPECHECK_OS).
#if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
@preconcurrency import os
#endif

/// The cache's messages and signposts in the system log (Apple platforms), under the subsystem
/// ``subsystem``: each event as a debug message (problems as errors), and the intervals of
/// fetches, decodes and disk batches as signposts, so that Instruments shows them beside the
/// app's own. Made only when ``AppCache/Configuration/logsToSystem`` asks; elsewhere there is
/// no system log, and ``AppCache/events`` is the way.
///
/// Thread safety: `Sendable`; `Logger` and `OSSignposter` may be used from any thread (older
/// SDKs do not mark them `Sendable`), and nothing else here changes.
final class SystemLog: @unchecked Sendable {
    /// The subsystem every message and signpost is logged under.
    static let subsystem = "net.appcache"

    #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
    // The `os_log` and `os_signpost` functions with a format string, rather than `Logger` and
    // `OSSignposter`: the same log, and code every SDK's os overlay compiles alike.
    private let log: OSLog
    #endif

    /// A system log for the caches of `category` (the root's last path component), or `nil`
    /// where the platform has none.
    static func make(category: String) -> SystemLog? {
        #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
        return SystemLog(category: category)
        #else
        return nil
        #endif
    }

    private init(category: String) {
        #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
        log = OSLog(subsystem: Self.subsystem, category: category)
        #endif
    }

    /// Logs `event`: a problem as an error, the rest at the debug level (kept in memory only,
    /// unless the device is being logged from).
    func log(_ event: CacheEvent) {
        #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
        let type: OSLogType
        if case .problemFound = event.kind { type = .error } else { type = .debug }
        os_log("%{public}@", log: log, type: type, event.description as NSString)
        #endif
    }

    /// An interval shown in Instruments, begun by ``begin(_:_:)``.
    struct Interval: Sendable {
        #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
        fileprivate let id: OSSignpostID
        fileprivate let name: StaticString
        #endif
    }

    /// Begins the interval `name` ("fetch", "decode", "disk batch") about `label`.
    func begin(_ name: StaticString, _ label: String) -> Interval {
        #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
        let id = OSSignpostID(log: log)
        os_signpost(.begin, log: log, name: name, signpostID: id, "%{public}@", label as NSString)
        return Interval(id: id, name: name)
        #else
        return Interval()
        #endif
    }

    /// Ends an interval.
    func end(_ interval: Interval) {
        #if canImport(os, _version: 1035) || APPCACHE_TYPECHECK_OS
        os_signpost(.end, log: log, name: interval.name, signpostID: interval.id)
        #endif
    }
}
