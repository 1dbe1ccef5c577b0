import Dispatch
import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

extension AppCache {
    /// Subscribes to the lifecycle events the platform has, so that memory is given back and
    /// dirty collections reach disk before the process is suspended or ends.
    ///
    /// - iOS, tvOS, visionOS apps (UIKit): a memory warning writes dirty collections and empties
    ///   memory; entering the background flushes inside an expiring activity; termination
    ///   flushes; becoming active lets disk writes start again after the system ended an
    ///   activity (see ``SuspensionGate``).
    /// - App extensions there (widgets, share, notification extensions): the host app's
    ///   entering the background (`NSExtensionHostDidEnterBackground`) flushes inside an
    ///   expiring activity, then no disk write starts until the host comes back
    ///   (`NSExtensionHostWillEnterForeground`). `UIApplication.shared` is never touched, so
    ///   the library links into extensions.
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
        observe(UIApplication.didEnterBackgroundNotification) { $0.flushBeforeSuspension(thenClose: false) }
        observe(UIApplication.willTerminateNotification) { $0.store.reportAll($0.store.writeDirtyEntries()) }
        // Change signals posted while the process was suspended were not delivered: look again.
        observe(UIApplication.didBecomeActiveNotification) { $0.didResume() }
        #elseif canImport(AppKit)
        observe(NSApplication.willTerminateNotification) { $0.store.reportAll($0.store.writeDirtyEntries()) }
        #endif
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        observe(.NSExtensionHostDidEnterBackground) { $0.flushBeforeSuspension(thenClose: true) }
        observe(.NSExtensionHostWillEnterForeground) { $0.didResume() }
        #endif
        #if canImport(Darwin)
        let pressure = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: store.writeBack.queue)
        pressure.setEventHandler { [weak self] in self?.didReceiveMemoryWarning() }
        pressure.activate()
        subscriptions.sources.append(pressure)
        #endif
        lifecycleSubscriptions.withLock { $0 = subscriptions }
    }

    /// The app is active again: disk writes may start again (see ``SuspensionGate``), dirty
    /// collections are written on the write-back thread as usual, and the cache catches up
    /// with changes other processes made while this one was suspended (their change signals are
    /// not queued for a suspended process): observers look again, and a cache that follows the
    /// signed-in user reads the record again.
    func didResume() {
        store.resume()
        queries.refreshTriggers.foreground()
        queries.observers.notifyAll()
        followSignedInUser()
        outbox.sendNow()
    }

    /// Writes every dirty collection while the system is about to suspend the process.
    ///
    /// The flush runs on the write-back thread inside the background activity of
    /// ``SuspensionGate``, taken here, on the notification's thread, so that the process stays
    /// awake until the flush has run (iOS, tvOS, watchOS, visionOS, apps and extensions alike).
    /// When the system says time is up, the flush stops between two archives and lets go of the
    /// lock file; collections not written then stay dirty in memory for the next flush, and the
    /// ones written are complete (every archive is renamed into place whole).
    ///
    /// - Parameter thenClose: whether no disk write may start after this flush until the app is
    ///   active again (an extension whose host went to the background is suspended next).
    func flushBeforeSuspension(thenClose: Bool) {
        queries.refreshTriggers.background()
        store.flushBeforeSuspension(thenClose: thenClose)
    }
}

extension AppCache {
    /// Tells the cache the app became active, where it cannot observe that itself (Linux, a
    /// process with its own lifecycle, tests); on Apple platforms it follows
    /// `UIApplication.didBecomeActiveNotification` and the extension host's return on its own.
    ///
    /// Disk writes may start again after the system ended a background activity, dirty
    /// collections are written as usual, every observer looks at the disk again (changes of
    /// other processes while this one was suspended were not signalled to it), watches of stale
    /// collections that refetch on foreground refetch, and polling resumes.
    ///
    /// Thread safety: any thread; returns at once.
    public func applicationDidBecomeActive() {
        didResume()
    }

    /// Tells the cache the app went to the background, where it cannot observe that itself: it
    /// writes every dirty collection on its write-back thread (inside a background activity on
    /// Apple platforms), so that a suspension or termination that follows loses nothing, and
    /// watches pause their polling until the app is active again.
    ///
    /// Thread safety: any thread; returns at once.
    public func applicationDidEnterBackground() {
        flushBeforeSuspension(thenClose: false)
    }

    /// Tells the cache the network is available again: loads waiting to retry a fetch that
    /// failed for want of a network (see ``RetryPolicy``) try again at once, and watches of
    /// stale collections that refetch on reconnect (``RefreshTriggers/onReconnect``) refetch, and
    /// queued changes (``enqueue(_:)``) waiting out a failed send are sent at once.
    /// On Apple platforms the system's network path monitor calls it on its own.
    ///
    /// Thread safety: any thread; returns at once.
    public func networkDidBecomeAvailable() {
        queries.networkDidBecomeAvailable()
    }
}
