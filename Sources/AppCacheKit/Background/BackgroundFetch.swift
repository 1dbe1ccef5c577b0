import Foundation

/// A fetch a background refresh may run for a collection, its model type erased: a fetch
/// registered for the type (``AppCache/registerFetch(for:_:)``), or the one the collection's
/// last load or watch in this process passed.
///
/// Thread safety: a `Sendable` value.
struct BackgroundFetch: Sendable {
    /// What became of one collection's refresh.
    enum Outcome: Sendable {
        /// Fetched and stored.
        case refreshed
        /// The server said the cached items are current; they were re-dated.
        case notModified
        /// The fetch, or storing what it brought, failed; the cached items are untouched.
        case failed(any Error)
        /// Cancelled (the deadline, the caller's cancellation): nothing was stored.
        case cancelled
        /// Nothing to do: fresh by the time it was looked at (another load refreshed it), or
        /// its user's data went meanwhile.
        case unneeded
    }

    /// Refreshes the collection under a key through the query client.
    let refresh: @Sendable (_ client: QueryClient, _ key: String?) async -> Outcome

    /// Erases `fetch`, a load's fetch for collections of `Model`.
    init<Model: CacheableModel>(_ type: Model.Type, _ fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>) {
        refresh = { client, key in await client.refreshForBackground(Model.self, key: key, fetch: fetch) }
    }
}

extension QueryClient {
    /// Refreshes the current user's collection of `Model` under `key` as a load would: through
    /// its single flight (joining one under way), storing what the fetch brings, re-dating on
    /// `notModified`, telling every observer; with no retry (a background refresh has no time
    /// for backoff), and only if the collection is still stale when looked at.
    func refreshForBackground<Model: CacheableModel>(
        _ type: Model.Type, key: String?, fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) async -> BackgroundFetch.Outcome {
        let (session, switches) = store.sessionAndSwitches
        var last: LoadedItems<Model>?
        do {
            try await runLoad(
                Model.self, key: key, policy: .staleWhileRevalidate, retry: .none, session: session, switches: switches, fetch: fetch,
                yield: { last = $0 })
        } catch {
            return Task.isCancelled ? .cancelled : .failed(error)
        }
        switch last?.source {
        case .fetch: return .refreshed
        case .notModified: return .notModified
        default:
            if let error = last?.refreshError { return .failed(error) }
            if Task.isCancelled { return .cancelled }
            return .unneeded
        }
    }
}
