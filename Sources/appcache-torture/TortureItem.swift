import AppCacheKit
import Foundation

/// An item that checks itself: it names the user, key and write (sequence number) it belongs
/// to, its place in the collection and the collection's length, with a checksum over all of
/// that, so a torn, mixed, foreign or stale collection is recognised from the items alone.
struct TortureItem: CacheableModel, Equatable {
    var user: String
    var key: String
    var sequence: Int
    var index: Int
    var count: Int
    var checksum: UInt64
    /// Some bulk, so that collections vary in size.
    var filler: String

    static var cacheName: String { "TortureItems" }

    /// The collection written as write `sequence` of `user`'s `key`.
    static func collection(user: String, key: String, sequence: Int) -> [TortureItem] {
        let count = 1 + Int(truncatingIfNeeded: (UInt64(truncatingIfNeeded: sequence) &* 0x9E37_79B9_7F4A_7C15) >> 60) % 12
        return (0..<count).map { index in
            let filler = String(repeating: "x", count: (sequence &* 31 &+ index) % 200)
            return TortureItem(
                user: user, key: key, sequence: sequence, index: index, count: count,
                checksum: checksum(user, key, sequence, index, count, filler), filler: filler)
        }
    }

    /// The collection written as write `sequence` of `user`'s `key`, with about `bytes` bytes
    /// of filler spread over its items: big ones are archives of their own, past the pack limit.
    static func collection(user: String, key: String, sequence: Int, bytes: Int) -> [TortureItem] {
        let count = 1 + Int(truncatingIfNeeded: (UInt64(truncatingIfNeeded: sequence) &* 0x9E37_79B9_7F4A_7C15) >> 60) % 12
        let each = max(bytes / count, 0)
        return (0..<count).map { index in
            let filler = String(repeating: "y", count: each + (sequence &+ index) % 7)
            return TortureItem(
                user: user, key: key, sequence: sequence, index: index, count: count,
                checksum: checksum(user, key, sequence, index, count, filler), filler: filler)
        }
    }

    static func checksum(_ user: String, _ key: String, _ sequence: Int, _ index: Int, _ count: Int, _ filler: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in "\(user)\u{1}\(key)\u{1}\(sequence)\u{1}\(index)\u{1}\(count)\u{1}\(filler)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// Why `items` is not one whole write of `user`'s `key`, or `nil` when it is.
    static func problem(with items: [TortureItem], user: String, key: String) -> String? {
        guard let first = items.first else { return "an empty collection (no write caches one)" }
        guard first.user == user else { return "another user's items (\(first.user)) for \(user)" }
        guard first.key == key else { return "another key's items (\(first.key)) for \(key)" }
        guard items.count == first.count else { return "a torn collection: \(items.count) of \(first.count) items" }
        for (position, item) in items.enumerated() {
            guard item.sequence == first.sequence else { return "a mixed collection: writes \(first.sequence) and \(item.sequence)" }
            guard item.index == position, item.user == user, item.key == key, item.count == first.count else {
                return "a collection out of order or mixed at item \(position)"
            }
            guard item.checksum == checksum(item.user, item.key, item.sequence, item.index, item.count, item.filler) else {
                return "an item failing its checksum at \(position)"
            }
        }
        return nil
    }
}

/// A value behind a lock, shared between threads.
final class Shared<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
