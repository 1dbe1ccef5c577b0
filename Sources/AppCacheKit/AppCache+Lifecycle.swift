import Dispatch
import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// What the cache subscribed to so as to follow the application's lifecycle; undone in `deinit`.
struct LifecycleSubscriptions {
    var observers: [any NSObjectProtocol] = []
    var sources: [any DispatchSourceProtocol] = []

    /// Removes every observer and cancels every source.
    mutating func cancel() {
        for observer in observers {
            NotificationCenter.default.removeObserver(observer)
        }
        for source in sources {
            source.cancel()
        }
        self = LifecycleSubscriptions()
    }
}

extension AppCache {
    /// Subscribes to the lifecycle events the platform has, so that memory is given back and
    /// dirty collections reach disk before the process is suspended or ends.
    ///
    /// - iOS, tvOS, visionOS apps (UIKit): a memory warning writes dirty collections and empties
    ///   memory; entering the background flushes inside an expiring activity; termination
    ///   flushes.
    /// - App extensions there (widgets, share, notification extensions): the host app's
    ///   entering the background (`NSExtensionHostDidEnterBackground`) flushes inside an
    ///   expiring activity. `UIApplication.shared` is never touched, so the library links into
    ///   extensions.
    /// - watchOS: the extension-host notification, where the system posts it.
    /// - macOS (AppKit): termination flushes.
    /// - Every Apple platform: the system's memory-pressure warnings empty memory as a memory
    ///   warning does, also where UIKit posts none (macOS, watchOS, extensions without UI).
    /// - Linux has no such events: the cache flushes at a normal exit instead
    ///   (``Configuration/flushesAtExit``).
    ///
    /// Observers and sources hold the cache weakly and are removed in `deinit`.
    func observeApplicationLifecycle() {
        var subscriptions = LifecycleSubscriptions()
        func observe(_ name: Notification.Name, _ action: @escaping @Sendable (AppCache) -> Void) {
            subscriptions.observers.append(
                NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] _ in
                    if let self { action(self) }
                })
        }
        #if canImport(UIKit) && !os(watchOS)
        observe(UIApplication.didReceiveMemoryWarningNotification) { $0.didReceiveMemoryWarning() }
        observe(UIApplication.didEnterBackgroundNotification) { $0.flushBeforeSuspension() }
        observe(UIApplication.willTerminateNotification) { $0.reportAll($0.writeDirtyEntries()) }
        // Change signals posted while the process was suspended were not delivered: look again.
        observe(UIApplication.didBecomeActiveNotification) { $0.didResume() }
        #elseif canImport(AppKit)
        observe(NSApplication.willTerminateNotification) { $0.reportAll($0.writeDirtyEntries()) }
        #endif
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        observe(.NSExtensionHostDidEnterBackground) { $0.flushBeforeSuspension() }
        observe(.NSExtensionHostWillEnterForeground) { $0.didResume() }
        #endif
        #if canImport(Darwin)
        let pressure = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: writeBackQueue)
        pressure.setEventHandler { [weak self] in self?.didReceiveMemoryWarning() }
        pressure.activate()
        subscriptions.sources.append(pressure)
        #endif
        lifecycleSubscriptions.withLock { $0 = subscriptions }
    }

    /// Catches up with changes other processes made while this one was suspended (their
    /// change signals are not queued for a suspended process): observers look again, and a
    /// cache that follows the signed-in user reads the record again.
    func didResume() {
        observers.notifyAll()
        followSignedInUser()
    }

    /// Writes every dirty collection while the system is about to suspend the process.
    ///
    /// Where the system grants a process time to finish (iOS, tvOS, watchOS, visionOS, apps and
    /// extensions alike), the flush runs inside `ProcessInfo.performExpiringActivity`: the
    /// process stays awake until the flush ends, and when the system needs it to stop, the
    /// flush stops between two archives. Collections not written then stay dirty in memory for
    /// the next flush; the ones written are complete (every archive is renamed into place whole).
    func flushBeforeSuspension() {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        let expired = Locked(false)
        ProcessInfo.processInfo.performExpiringActivity(withReason: "AppCache: writing cached collections") {
            [weak self] isExpiring in
            guard !isExpiring else {
                expired.withLock { $0 = true }
                return
            }
            guard let self else { return }
            reportAll(writeDirtyEntries(until: { expired.withLock { $0 } }))
        }
        #else
        reportAll(writeDirtyEntries())
        #endif
    }
}
