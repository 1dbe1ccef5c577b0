/// When ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` fetches, and what it yields first.
public enum LoadPolicy: Sendable, Hashable {
    /// Yields what is cached at once; fetches only when it is stale or missing, then yields the
    /// fetched items. The default: the screen shows something at once and is current soon after.
    case staleWhileRevalidate
    /// Yields what is cached, even stale, and stops; fetches only when nothing is cached.
    case cacheFirst
    /// Fetches first and yields the fetched items; what is cached is yielded only when the
    /// fetch fails (the offline fallback).
    case fetchFirst
}
