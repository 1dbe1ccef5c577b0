/// When a ``AppCache/watch(_:forKey:policy:refresh:retry:fetch:)`` refetches on its own, beside
/// invalidations (always): what TanStack Query calls `refetchOnWindowFocus`,
/// `refetchOnReconnect` and `refetchInterval`.
///
/// Thread safety: a value.
public struct RefreshTriggers: Sendable, Hashable {
    /// Refetch a stale collection when the app becomes active (a fresh one is not refetched).
    public var onForeground: Bool
    /// Refetch a stale collection when the network becomes available again.
    public var onReconnect: Bool
    /// Refetch on this interval while watched, whatever the staleness (the app's explicit
    /// choice, as a live score needs); `nil`: never. Paused while the app is in the background.
    public var every: Duration?

    /// - Parameters:
    ///   - onForeground: refetch a stale collection when the app becomes active.
    ///   - onReconnect: refetch a stale collection when the network comes back.
    ///   - every: poll on this interval while watched; `nil` for never.
    public init(onForeground: Bool = true, onReconnect: Bool = true, every: Duration? = nil) {
        self.onForeground = onForeground
        self.onReconnect = onReconnect
        self.every = every
    }

    /// On foreground and on reconnect, no polling.
    public static let `default` = RefreshTriggers()

    /// Only invalidations refetch.
    public static let none = RefreshTriggers(onForeground: false, onReconnect: false, every: nil)
}
