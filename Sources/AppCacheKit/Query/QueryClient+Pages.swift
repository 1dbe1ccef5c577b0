import Foundation

extension QueryClient {
    /// Appends the page after the stored cursor (see ``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)``).
    ///
    /// - Parameter target: the session the page is for (its user's collection, current or
    ///   not); `nil` for the current user's.
    /// - Returns: the collection; `nil` when the page was dropped for `target`, whose user's data
    ///   was removed.
    func loadNextPage<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, forKey key: String?, maxCount: Int?, retry: RetryPolicy, for target: CacheSession? = nil,
        fetch: @escaping @Sendable (_ cursor: String) async throws -> Page<Model>
    ) async throws -> LoadedItems<Model>? {
        let (current, switches) = store.sessionAndSwitches
        let session = target ?? current
        if let target, !store.standing(of: target).mayWrite { return nil }
        let cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches, for: target) }
        guard let cached, let cursor = cached.stored.nextPageCursor else {
            throw AppCacheError(
                code: .noNextPage, message: "There is no next page to load: no first page was stored, or the last page was reached.",
                cacheName: store.typeInfo(Model.self).cacheName, key: key)
        }
        let flightKey = FlightTable.Key(session: session, type: ObjectIdentifier(Model.self), key: key, pageCursor: cursor)
        let outcome = await flights.join(flightKey, as: Model.self) { [self] () -> Flight<Model>.Outcome in
            switch await runFetch(
                Model.self, key: key, user: session.user, retry: retry, finished: { .fetchFinished(itemCount: $0.items.count) },
                { try await fetch(cursor) })
            {
            case .success(let page):
                if Task.isCancelled { return .cancelled }
                return await LibraryThreads.run { [self] in append(page, from: cursor, to: Model.self, key: key, session: session, bound: target != nil, maxCount: maxCount) }
            case .failure(let error):
                return .failed(error)
            case nil:
                return .cancelled
            }
        }
        switch outcome {
        case .items(let items, let cachedDate):
            return LoadedItems(items: items, cachedDate: cachedDate, isStale: store.isStale(Model.self, key: key, cachedAt: cachedDate), source: .fetch)
        case .failed(let error):
            throw error
        case .notModified, .dropped, .cancelled:
            if Task.isCancelled { throw CancellationError() }
            // Dropped (the user changed, or their data went) or superseded by a refresh: the
            // collection as it is, if it is still that user's.
            if let target, !store.standing(of: target).mayWrite { return nil }
            guard let current = try await LibraryThreads.run({ [self] in try readForLoad(Model.self, key: key, switches: switches, for: target) }) else {
                throw AppCacheError(
                    code: .notCached, message: "The page was dropped: the user who asked for it is no longer current, or the collection is no longer cached.",
                    cacheName: store.typeInfo(Model.self).cacheName, key: key)
            }
            return current.loaded
        }
    }

    /// Whether a next page can be loaded (see ``AppCache/hasNextPage(_:forKey:)``).
    func hasNextPage<Model: CacheableModel>(_ type: Model.Type, forKey key: String?) -> Bool {
        let switches = store.sessionAndSwitches.switches
        return ((try? readForLoad(Model.self, key: key, switches: switches)) ?? nil)?.stored.nextPageCursor != nil
    }

    /// A refresh replaced the pages a next page was fetched for.
    private struct PageSuperseded: Error {}

    /// Appends `page`, fetched from `cursor`, to the collection of `session`'s user,
    /// atomically (``update(_:forKey:session:_:)``); blocks on the disk.
    private func append<Model: CacheableModel & Identifiable>(
        _ page: Page<Model>, from cursor: String, to type: Model.Type, key: String?, session: CacheSession, bound: Bool, maxCount: Int?
    ) -> Flight<Model>.Outcome {
        do {
            let stored = try store.update(Model.self, forKey: key, session: session, onlyWhileCurrent: !bound) { items, storedCursor in
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
