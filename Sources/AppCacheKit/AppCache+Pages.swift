import Foundation

extension AppCache {
    /// Appends the page after the stored cursor to the collection of `Model` under `key`, and
    /// returns the whole collection.
    ///
    /// The first page comes from a fetch that answers ``FetchResult/page(_:next:validators:)``
    /// (through ``load(_:forKey:policy:retry:fetch:)`` or ``watch(_:forKey:policy:refresh:retry:fetch:)``):
    /// it replaces the collection and stores the cursor of the page after it, with the
    /// validators, in the archive (a relaunch goes on from there). Each call fetches the page at
    /// the stored cursor, appends its items (an item whose `id` is already present is replaced
    /// in place, not repeated), keeps the first `maxCount` items, and stores the new cursor. The
    /// collection keeps its cached date: staleness is the first page's. A refresh of the first
    /// page drops the later pages and stores its own cursor; a page fetched from a cursor that a
    /// refresh replaced meanwhile is dropped, and the collection is returned as the refresh left
    /// it. Two calls at once fetch once. Like every write it is bound to the user who started
    /// it: if another user signs in before the page arrives, the page is dropped (as
    /// ``updateItems(_:forKey:for:_:)`` drops an update), never appended to anyone else's
    /// collection, and the call throws `notCached`.
    ///
    /// ```swift
    /// func showMore() async throws {
    ///     guard cache.hasNextPage(Post.self, forKey: "timeline") else { return }
    ///     let all = try await cache.loadNextPage(Post.self, forKey: "timeline", maxCount: 800) { cursor in
    ///         let posts = try await api.timeline(maxID: cursor)
    ///         return Page(items: posts, next: posts.last.map { String($0.id) })
    ///     }
    ///     show(all.items)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type; its `id` says which items are the same.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - maxCount: the most items the collection keeps (the first ones); `nil` for no limit.
    ///   - retry: how a failed page fetch is tried again.
    ///   - fetch: brings the page at a cursor.
    /// - Returns: the whole collection after the page, source ``LoadedItems/Source/fetch``.
    /// - Throws: ``AppCacheError/Code/noNextPage`` when no cursor is stored (no first page yet,
    ///   or the last page reached), without fetching; what `fetch` throws, after the retries;
    ///   the write errors of ``updateItems(_:forKey:_:)``.
    public func loadNextPage<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, forKey key: String? = nil, maxCount: Int? = nil,
        retry: RetryPolicy = .default,
        fetch: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>
    ) async throws -> LoadedItems<Model> {
        let (session, switches) = state.withLock { ($0.session, $0.sessions.switches) }
        let cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches) }
        guard let cached, let cursor = cached.nextPageCursor else {
            throw AppCacheError(
                code: .noNextPage, message: "There is no next page to load: no first page was stored, or the last page was reached.",
                cacheName: typeInfo(Model.self).cacheName, key: key)
        }
        let flightKey = FlightTable.Key(session: session, type: ObjectIdentifier(Model.self), key: key, pageCursor: cursor)
        let outcome = await flights.join(flightKey, as: Model.self) { [self] () -> Flight<Model>.Outcome in
            switch await attempt(retry, { try await fetch(cursor) }) {
            case .success(let page):
                if Task.isCancelled { return .cancelled }
                return await LibraryThreads.run { [self] in append(page, from: cursor, to: Model.self, key: key, session: session, maxCount: maxCount) }
            case .failure(let error):
                return .failed(error)
            case nil:
                return .cancelled
            }
        }
        switch outcome {
        case .items(let items, let cachedDate):
            return LoadedItems(items: items, cachedDate: cachedDate, isStale: isStale(Model.self, key: key, cachedAt: cachedDate), source: .fetch)
        case .failed(let error):
            throw error
        case .notModified, .dropped, .cancelled:
            if Task.isCancelled { throw CancellationError() }
            // Dropped (the user changed, or their data went) or superseded by a refresh: the
            // collection as it is, if it is still that user's.
            guard let current = try await LibraryThreads.run({ [self] in try readForLoad(Model.self, key: key, switches: switches) }) else {
                throw AppCacheError(
                    code: .notCached, message: "The page was dropped: the user who asked for it is no longer current, or the collection is no longer cached.",
                    cacheName: typeInfo(Model.self).cacheName, key: key)
            }
            return current.loaded
        }
    }

    /// Whether the collection of `Model` under `key` of the current user has a next page to
    /// load (a cursor stored by its last page); `false` when it has none, or is not cached.
    ///
    /// Reads the collection's record (memory, or the archive) on the caller's thread.
    public func hasNextPage<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Bool {
        let switches = state.withLock { $0.sessions.switches }
        return ((try? readForLoad(Model.self, key: key, switches: switches)) ?? nil)?.nextPageCursor != nil
    }

    /// A refresh replaced the pages a next page was fetched for.
    private struct PageSuperseded: Error {}

    /// Appends `page`, fetched from `cursor`, to the collection of `session`'s user,
    /// atomically (``update(_:forKey:session:_:)``); blocks on the disk.
    private func append<Model: CacheableModel & Identifiable>(
        _ page: Page<Model>, from cursor: String, to type: Model.Type, key: String?, session: CacheSession, maxCount: Int?
    ) -> Flight<Model>.Outcome {
        do {
            let stored = try update(Model.self, forKey: key, session: session) { items, storedCursor in
                guard storedCursor == cursor else { throw PageSuperseded() }
                var positions: [Model.ID: Int] = [:]
                for (index, item) in items.enumerated() { positions[item.id] = index }
                for item in page.items {
                    if let index = positions[item.id] {
                        items[index] = item
                    } else {
                        positions[item.id] = items.count
                        items.append(item)
                    }
                }
                if let maxCount, items.count > maxCount { items.removeLast(items.count - max(maxCount, 0)) }
                storedCursor = page.next
            }
            guard let stored else { return .dropped }
            return .items(stored.items, cachedDate: stored.cachedDate)
        } catch is PageSuperseded {
            return .dropped
        } catch {
            return .failed(error)
        }
    }
}
