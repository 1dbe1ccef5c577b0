import Foundation

/// Loads, watches and pages over the store: the single flight of fetches, retries, the app's
/// refetch triggers, the network signal, and the streams that follow changes.
///
/// It holds the ``CollectionStore`` (what is cached) and the ``Outbox`` (the pending changes a
/// load shows on top), and owns the ``FlightTable``, the ``RefreshTriggerHub``, the
/// ``NetworkSignal``, the ``ChangeObservers`` every stream registers with, and the
/// ``ChangeWatcher`` that hears other processes and instances. ``CachedQuery`` talks to it.
///
/// Thread safety: `Sendable`. Its follow loops hold it only while a step runs, so a cache
/// nobody holds goes away with its streams finishing; fetches and steps that touch the disk
/// run on the library's threads, never on the cooperative pool.
final class QueryClient: Sendable {
    let store: CollectionStore
    let outbox: Outbox
    /// The fetches under way, shared by equal loads.
    let flights = FlightTable()
    /// Wakes loads that wait for the network (``RetryPolicy``).
    let network = NetworkSignal()
    /// The app-wide events watches refetch on.
    let refreshTriggers = RefreshTriggerHub()
    /// The streams that follow changes, told of every change.
    let observers: ChangeObservers
    /// Wakes the observers when another process or instance changes the disk; started by the
    /// first stream.
    let watcher: ChangeWatcher
    /// The fetches registered for background refreshes, and the collections loads and watches
    /// used (see ``CollectionUses``).
    let uses = CollectionUses()
    /// How to stop the network path monitors started for watches.
    let pathMonitors = Locked<[@Sendable () -> Void]>([])
    /// Told when the network came back (the outbox sends at once).
    private let onNetwork: @Sendable () -> Void

    /// - Parameters:
    ///   - observers: the streams' registry; the store's and the outbox's changes reach it.
    ///   - watcher: the watcher of the disk's shared change count.
    ///   - onNetwork: told when a path monitor sees the network come back.
    init(
        store: CollectionStore, outbox: Outbox, observers: ChangeObservers, watcher: ChangeWatcher,
        onNetwork: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.outbox = outbox
        self.observers = observers
        self.watcher = watcher
        self.onNetwork = onNetwork
    }

    deinit {
        for cancel in pathMonitors.withLock({ $0 }) { cancel() }
        // The streams that follow collections (``updates(_:forKey:)``, the pending changes) hold
        // the client weakly and wait on their signals between looks: woken, they find it gone
        // and finish, as ``AppCache/updates(_:forKey:)`` promises. Waking one resumes its task, a
        // Dispatch call, so on a library thread: this one may be exiting (see
        // ``LibraryThreads/handOff(_:)``).
        let observers = observers
        if !observers.isEmpty {
            LibraryThreads.handOff { observers.notifyAll() }
        }
    }

    /// The network came back: loads waiting for it go on, watches that refetch on reconnect
    /// do, and the outbox sends.
    func networkDidBecomeAvailable() {
        network.signal()
        refreshTriggers.reconnect()
        onNetwork()
    }

    /// Notes that a load or watch of the collection of `Model` under `key` began, for
    /// background refreshes (``CollectionUses``): `session`'s user's, or the current one's.
    func noteUse<Model: CacheableModel>(
        _ type: Model.Type, key: String?, for session: CacheSession?,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) {
        uses.noteUse(Model.self, key: key, user: session?.user ?? store.user, store: store, fetch: fetch)
    }
}
