public import Foundation
#if canImport(Combine)
public import Combine
#endif
#if canImport(Observation)
public import Observation
#endif

/// What a `CachedItems` property shows and does, kept for as long as its view is on screen:
/// the items of one collection, the watch that keeps them current, and the refresh and paging
/// actions. A view reaches it through the property's projected value (`$posts`).
///
/// ```swift
/// import SwiftUI
///
/// struct TopPosts: View {
///     @CachedItems(Post.self, forKey: "top", in: cache, fetch: { _ in .items(try await api.top()) })
///     var posts
///
///     var body: some View {
///         List(posts) { Text($0.title) }
///             .refreshable { await $posts.refresh() }
///             .overlay { if $posts.isLoading && posts.isEmpty { ProgressView() } }
///             .safeAreaInset(edge: .bottom) {
///                 if $posts.hasPendingMutations { Text("Waiting for the network") }
///             }
///     }
/// }
/// ```
///
/// SwiftUI keeps one state per view identity (in a `StateObject`), however often it re-creates
/// the view value: the first `CachedItems` update starts the watch, later updates with the
/// same cache and key only pass on the newest fetch closure (no refetch, no second watch), and
/// an update with another key re-keys it: the old items stay shown until the new collection's
/// arrive. The watch stops when the state goes (the view left the hierarchy).
///
/// Nothing it does blocks the main actor on the disk: a collection held in memory shows at
/// once, in the same update; one that must be read from disk is read on the library's own
/// threads and shows when it arrives (``items`` is `nil` meanwhile).
///
/// On platforms with Combine it is an `ObservableObject` whose `objectWillChange` fires before
/// each change (SwiftUI redraws the view), and from iOS 17, macOS 14, tvOS 17 and watchOS 10 on
/// it is `Observable` as well: a view handed `$posts` as a plain property, or any code in
/// `withObservationTracking`, follows the properties it reads. One API: the same declaration
/// works from iOS 16 on, and uses Observation where the system has it. (On Linux it is
/// `Observable`, which is how its tests observe it.)
///
/// Thread safety: main actor only.
@MainActor
public final class CachedItemsState<Model: CacheableModel> {
    /// The items: cached or fetched, the newest known; `nil` while none are known. After a
    /// re-key, the previous key's items until the new key's arrive.
    public private(set) var items: [Model]? {
        get { observe(); return shown.items }
        set { shown.items = newValue }
    }
    /// When ``items`` were cached; `nil` while none are known.
    public private(set) var cachedDate: Date? {
        get { observe(); return shown.cachedDate }
        set { shown.cachedDate = newValue }
    }
    /// Whether ``items`` are older than their type's staleness threshold (or invalidated), as
    /// of the last look.
    public private(set) var isStale: Bool {
        get { observe(); return shown.isStale }
        set { shown.isStale = newValue }
    }
    /// Whether something is being loaded: a ``refresh()``, a ``loadNextPage()``, or the first
    /// look (and, when nothing is cached, the first fetch) of the current key.
    public private(set) var isLoading: Bool {
        get { observe(); return shown.isLoading }
        set { shown.isLoading = newValue }
    }
    /// Why the last fetch could not bring items (cached items, if any, stand in for its
    /// result); `nil` after a successful one.
    public private(set) var refreshError: (any Error)? {
        get { observe(); return shown.refreshError }
        set { shown.refreshError = newValue }
    }
    /// Whether ``items`` include changes of the outbox (``AppCache/enqueue(_:)``) that the
    /// server has not confirmed yet.
    public private(set) var hasPendingMutations: Bool {
        get { observe(); return shown.hasPendingMutations }
        set { shown.hasPendingMutations = newValue }
    }
    /// Whether a next page can be loaded (``loadNextPage()``): the last page stored a cursor.
    /// Always `false` for a declaration without a page fetch.
    public private(set) var hasNextPage: Bool {
        get { observe(); return shown.hasNextPage }
        set { shown.hasNextPage = newValue }
    }

    /// What the properties above show.
    private struct Shown {
        var items: [Model]?
        var cachedDate: Date?
        var isStale = false
        var isLoading = false
        var refreshError: (any Error)?
        var hasPendingMutations = false
        var hasNextPage = false
    }
    private var shown = Shown()

    /// What Observation tracks: every property above reads it, every ``change(_:)`` mutates it
    /// (the properties change together, as one state).
    private var observationToken: UInt64 = 0
    #if canImport(Observation)
    /// The Observation registrar, where the system has Observation (an `ObservationRegistrar`,
    /// boxed: its type is not there before iOS 17).
    private let registrar: (any Sendable)? = {
        if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) { return ObservationRegistrar() }
        return nil
    }()
    #endif

    /// Tells Observation (where there is one) that the caller read the state.
    private func observe() {
        #if canImport(Observation)
        if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *), let registrar = registrar as? ObservationRegistrar {
            registrar.access(self, keyPath: \.observationToken)
        }
        #endif
    }

    #if canImport(Combine)
    /// Bumped at each change: its publisher is what `objectWillChange` sends.
    @Published private var revision: UInt64 = 0
    #endif

    /// Called after each change (Linux, tests); SwiftUI observes `objectWillChange` instead.
    var onChange: (() -> Void)?
    /// Wraps each change: SwiftUI's `withAnimation` when the declaration has an animation.
    var transaction: ((() -> Void) -> Void)?
    /// How many watches this state started (a re-key starts one more): what tests count.
    private(set) var watchesStarted = 0

    /// What the state follows now; `nil` before the first update.
    private var request: CachedItemsRequest<Model>?
    /// The newest fetch closure, which the running watch calls.
    private let latestFetch = Locked<(@Sendable (LoadContext<Model>) async throws -> FetchResult<Model>)?>(nil)
    /// Stops the current watch; released (and so stopped) when the state goes.
    private var following: StopOnRelease?
    /// Which watch is current: values of an earlier one (before a re-key) are ignored.
    private var generation: UInt64 = 0
    /// Whether the current key's first value has arrived.
    private var hasFirstValue = false
    /// How many refreshes and page loads run now: loading lasts until the last of them ends.
    private var actionsUnderWay = 0

    /// Makes a state that follows nothing yet: `CachedItems` starts it from its `update()`.
    ///
    /// Nonisolated, so a `StateObject` can make it wherever SwiftUI evaluates its initial value.
    nonisolated public init() {}

    /// Follows `request`: starts the watch the first time, re-keys when the cache or key
    /// changed, and otherwise only keeps the newest closures. Call it from every update.
    ///
    /// - Complexity: O(1) when the collection did not change; a memory probe (a hash lookup,
    ///   never the disk) when the watch starts or re-keys.
    func update(_ request: CachedItemsRequest<Model>) {
        latestFetch.withLock { $0 = request.fetch }
        let previous = self.request
        self.request = request
        if let previous, previous.collection == request.collection { return }
        start(request)
    }

    /// Fetches the collection now (whatever the policy) and returns when the fetch has ended:
    /// what `.refreshable` awaits. A fetch already under way for the collection is joined.
    ///
    /// On failure ``refreshError`` is set, and the cached items stay shown.
    public func refresh() async {
        guard let request else { return }
        actionsUnderWay += 1
        change { isLoading = true }
        defer {
            actionsUnderWay -= 1
            settleLoading()
        }
        let fetch = forwardingFetch
        do {
            let answers = request.cache.queries.load(Model.self, forKey: request.key, policy: .fetchFirst, retry: request.retry, fetch: fetch)
            for try await loaded in answers where self.request?.collection == request.collection {
                show(loaded, overtakable: true)
            }
        } catch {
            if self.request?.collection == request.collection { change { refreshError = error } }
        }
    }

    /// Appends the next page to the collection (``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)``)
    /// with the declaration's page fetch, and shows the whole collection.
    ///
    /// - Throws: ``AppCacheError/Code/noNextPage`` when there is none (or the declaration has
    ///   no page fetch), and what the page fetch throws, after its retries.
    public func loadNextPage() async throws {
        guard let request, let nextPage = request.nextPage else {
            throw AppCacheError(code: .noNextPage, message: "The declaration has no page fetch.", cacheName: Model.cacheName, key: request?.key)
        }
        actionsUnderWay += 1
        change { isLoading = true }
        defer {
            actionsUnderWay -= 1
            settleLoading()
        }
        let loaded = try await nextPage(request.cache, request.key)
        if self.request?.collection == request.collection { show(loaded, overtakable: true) }
    }

    /// The fetch the watch and refreshes call: the newest closure the view declared.
    private var forwardingFetch: @Sendable (LoadContext<Model>) async throws -> FetchResult<Model> {
        { [latestFetch] context in
            guard let fetch = latestFetch.withLock({ $0 }) else { throw CancellationError() }
            return try await fetch(context)
        }
    }

    /// Starts the watch of `request`'s collection, stopping the previous one; keeps what is
    /// shown until the new collection's first value, unless memory holds it now.
    ///
    /// - Parameter fetchesFirst: whether the first look may fetch (`false`: a watch that
    ///   follows again after its first fetch failed, and waits for writes and triggers).
    private func start(_ request: CachedItemsRequest<Model>, fetchesFirst: Bool = true) {
        following = nil
        generation += 1
        hasFirstValue = !fetchesFirst
        watchesStarted += 1
        let current = generation
        if fetchesFirst, let hit = Self.memoryProbe(request) {
            // Staleness comes with the watch's first look, which may read the invalidations file.
            hasFirstValue = true
            show(LoadedItems(items: hit.items, cachedDate: hit.cachedDate, isStale: false, source: .memory))
        }
        settleLoading()
        let (stream, continuation) = StreamPair.nonThrowing(of: Event.self)
        let stop = request.cache.queries.startWatch(
            Model.self, key: request.key, policy: request.policy, fetchesFirst: fetchesFirst, refresh: request.refresh,
            retry: request.retry, fetch: forwardingFetch,
            yield: { continuation.yield(.loaded($0)) },
            finish: { error in
                continuation.yield(.finished(error))
                continuation.finish()
            })
        let task = Task { [weak self] in
            for await event in stream {
                guard let self, self.generation == current else { return }
                switch event {
                case .loaded(let loaded?):
                    self.hasFirstValue = true
                    self.show(loaded)
                case .loaded(nil):
                    self.hasFirstValue = true
                    self.change { (self.items, self.cachedDate, self.isStale, self.hasPendingMutations) = (nil, nil, false, false) }
                    self.settleLoading()
                case .finished(let error?):
                    // The first fetch failed with nothing to show: say why, and keep following
                    // the collection (a later write, a trigger or a refresh brings items).
                    self.hasFirstValue = true
                    self.change { self.refreshError = error }
                    self.settleLoading()
                    if let request = self.request { self.start(request, fetchesFirst: false) }
                case .finished(nil):
                    return
                }
            }
        }
        following = StopOnRelease {
            stop()
            task.cancel()
        }
    }

    /// The collection as memory holds it now (its pending changes applied), if it does; never
    /// reads the disk.
    private static func memoryProbe(_ request: CachedItemsRequest<Model>) -> (items: [Model], cachedDate: Date)? {
        let store = request.cache.store
        guard let hit = store.shownHit(ObjectIdentifier(Model.self), request.key), store.isLive(hit) else { return nil }
        return (hit.items.items(as: Model.self), hit.cachedDate)
    }

    /// Shows what a look, a load or a page brought.
    ///
    /// - Parameter overtakable: whether a newer value may already be shown (a refresh's
    ///   answers race the watch's): such an answer older than what is shown only sets the error.
    private func show(_ loaded: LoadedItems<Model>, overtakable: Bool = false) {
        if overtakable, let shown = cachedDate, loaded.cachedDate < shown {
            change { refreshError = loaded.refreshError }
            return
        }
        change {
            items = loaded.items
            cachedDate = loaded.cachedDate
            isStale = loaded.isStale
            refreshError = loaded.refreshError
            hasPendingMutations = loaded.hasPendingMutations
        }
        settleLoading()
        lookForNextPage()
    }

    /// Ends ``isLoading`` once no action runs and the current key's first value is in.
    private func settleLoading() {
        let loading = actionsUnderWay > 0 || !hasFirstValue
        if loading != isLoading { change { isLoading = loading } }
    }

    /// Updates ``hasNextPage`` from the collection's record, read on a library thread.
    private func lookForNextPage() {
        guard let request, request.nextPage != nil else { return }
        let cache = request.cache
        let key = request.key
        Task { [weak self] in
            let has = await LibraryThreads.run { cache.hasNextPage(Model.self, forKey: key) }
            guard let self, self.request?.collection == request.collection, self.hasNextPage != has else { return }
            self.change { self.hasNextPage = has }
        }
    }

    /// Makes one change observable: announced to SwiftUI before, to ``onChange`` after, inside
    /// the declaration's animation.
    private func change(_ body: () -> Void) {
        func apply() {
            #if canImport(Combine)
            revision &+= 1
            #endif
            body()
        }
        func applyObserved() {
            #if canImport(Observation)
            if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *), let registrar = registrar as? ObservationRegistrar {
                registrar.withMutation(of: self, keyPath: \.observationToken) {
                    observationToken &+= 1
                    apply()
                }
                return
            }
            #endif
            apply()
        }
        if let transaction { transaction(applyObserved) } else { applyObserved() }
        onChange?()
    }

    /// What the watch reports to the state's task.
    private enum Event: Sendable {
        case loaded(LoadedItems<Model>?)
        case finished((any Error)?)
    }
}

#if canImport(Combine)
extension CachedItemsState: ObservableObject {}
#endif

#if canImport(Observation)
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension CachedItemsState: Observable {}
#endif
