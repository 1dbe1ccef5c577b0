import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

extension AppCache {
    /// Subscribes to the application's lifecycle notifications where the platform has them.
    ///
    /// - UIKit (iOS, tvOS, visionOS, Mac Catalyst): a memory warning empties memory after
    ///   writing dirty collections; entering the background flushes inside a background task;
    ///   termination flushes.
    /// - AppKit (macOS): termination flushes.
    /// - Elsewhere (Linux, watchOS) there are no such notifications: call ``flush()`` and
    ///   ``didReceiveMemoryWarning()`` yourself, rely on `deinit`, or set
    ///   ``Configuration/flushesAtExit``.
    ///
    /// Observers hold the cache weakly and are removed in `deinit`.
    func observeApplicationLifecycle() {
        #if canImport(UIKit) && !os(watchOS)
        let center = NotificationCenter.default
        let observers: [any NSObjectProtocol] = [
            center.addObserver(forName: UIApplication.didReceiveMemoryWarningNotification, object: nil, queue: nil) {
                [weak self] _ in
                self?.didReceiveMemoryWarning()
            },
            center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil) {
                [weak self] _ in
                guard let self else { return }
                // UIKit posts this on the main thread; the flush runs there, inside a
                // background task so the system lets it finish.
                MainActor.assumeIsolated {
                    let application = UIApplication.shared
                    let task = application.beginBackgroundTask(withName: "AppCache flush", expirationHandler: nil)
                    self.reportAll(self.writeDirtyEntries())
                    if task != .invalid {
                        application.endBackgroundTask(task)
                    }
                }
            },
            center.addObserver(forName: UIApplication.willTerminateNotification, object: nil, queue: nil) {
                [weak self] _ in
                guard let self else { return }
                self.reportAll(self.writeDirtyEntries())
            },
        ]
        lifecycleObservers.withLock { $0 = observers }
        #elseif canImport(AppKit)
        let observer = NotificationCenter.default.addObserver(
            forName: NSApplication.willTerminateNotification, object: nil, queue: nil
        ) { [weak self] _ in
            guard let self else { return }
            self.reportAll(self.writeDirtyEntries())
        }
        lifecycleObservers.withLock { $0 = [observer] }
        #endif
    }
}
