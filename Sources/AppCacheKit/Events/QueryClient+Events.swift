import Foundation

extension QueryClient {
    /// Runs a fetch of the collection of `Model` under `key` for `user` as `retry` says (unless
    /// the configuration turns retries off), telling its events: started, each retry, and how
    /// it ended; a signpost spans it in the system log.
    ///
    /// - Parameter finished: what a fetch that brought its value ended as.
    /// - Returns: what ``RetryPolicy/run(network:timers:onRetry:_:)`` returns.
    func runFetch<Model: CacheableModel, Fetched: Sendable>(
        _ type: Model.Type, key: String?, user: String?, retry: RetryPolicy, finished: (Fetched) -> CacheEvent.Kind,
        _ operation: () async throws -> Fetched
    ) async -> Swift.Result<Fetched, any Error>? {
        let events = store.events
        let cacheName = store.typeInfo(Model.self).cacheName
        events.record(.fetchStarted, cacheName: cacheName, key: key, user: user)
        let interval = events.systemLog?.begin("fetch", cacheName + (key.map { "[\($0)]" } ?? ""))
        defer { if let interval { events.systemLog?.end(interval) } }
        let result = await retry.unlessOff(store.configuration).run(
            network: network, timers: store.configuration.timers,
            onRetry: { attempt, delay in
                events.record(.fetchRetried(attempt: attempt, delay: delay), cacheName: cacheName, key: key, user: user)
            }, operation)
        switch result {
        case .success(let fetched):
            events.record(finished(fetched), cacheName: cacheName, key: key, user: user)
        case .failure(let error):
            events.record(.fetchFailed(message: "\(error)"), cacheName: cacheName, key: key, user: user)
        case nil:
            break
        }
        return result
    }
}

extension FetchResult {
    /// What a fetch that answered this ended as.
    var eventKind: CacheEvent.Kind {
        switch answer {
        case .items(let items, _), .page(let items, _, _): .fetchFinished(itemCount: items.count)
        case .notModified: .fetchNotModified
        }
    }
}
