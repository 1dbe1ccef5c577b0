import Foundation

/// A fixed set of locks, one picked by a key's hash: serialises work per key (a
/// read-modify-write of one collection, which reads, decodes, encodes and writes while holding
/// it) without a lock per key or a table that grows.
///
/// Blocking `NSLock`s, not the state lock's kind: they are held across file I/O by design.
/// Two keys may share a stripe and then wait for each other; with 32 stripes that is rare.
final class StripedLock: @unchecked Sendable {
    // Immutable after init; NSLock is thread-safe.
    private let stripes: [NSLock]

    init(stripes: Int = 32) {
        self.stripes = (0..<max(stripes, 1)).map { _ in NSLock() }
    }

    /// Runs `body` holding the stripe of `key`.
    func withLock<Key: Hashable, Result>(for key: Key, _ body: () throws -> Result) rethrows -> Result {
        let stripe = stripes[Int(UInt(bitPattern: key.hashValue) % UInt(stripes.count))]
        stripe.lock()
        defer { stripe.unlock() }
        return try body()
    }
}
