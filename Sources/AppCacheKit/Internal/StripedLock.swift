import Foundation

/// A fixed set of locks, one picked by a key's hash: serialises work per key (a
/// read-modify-write of one collection, which reads, decodes, encodes and writes while holding
/// it) without a lock per key or a table that grows.
///
/// Blocking `NSLock`s, not the state lock's kind: they are held across file I/O by design.
/// Two keys may share a stripe and then wait for each other; with 32 stripes that is rare. The
/// locks are made on first use, not when the cache opens (32 of them cost about 7 µs, a tenth
/// of opening a cache, for an app that may never need them).
final class StripedLock: Sendable {
    private let count: Int
    private let stripes = Locked<[NSLock]>([])

    init(stripes: Int = 32) {
        count = max(stripes, 1)
    }

    /// Runs `body` holding the stripe of `key`.
    func withLock<Key: Hashable, Result>(for key: Key, _ body: () throws -> Result) rethrows -> Result {
        let index = Int(UInt(bitPattern: key.hashValue) % UInt(count))
        let stripe = stripes.withLock { stripes in
            if stripes.isEmpty { stripes = (0..<count).map { _ in NSLock() } }
            return stripes[index]
        }
        stripe.lock()
        defer { stripe.unlock() }
        return try body()
    }
}
