import Foundation

/// What a torture run did and found.
final class Report: @unchecked Sendable {
    private let lock = NSLock()
    private var _episodes = 0
    private var _kills = 0
    private var _operations = 0
    private var _violations: [String] = []
    private var _figures: [String] = []

    var episodes: Int {
        get { lock.withLock { _episodes } }
        set { lock.withLock { _episodes = newValue } }
    }

    var kills: Int {
        get { lock.withLock { _kills } }
        set { lock.withLock { _kills = newValue } }
    }

    var operations: Int {
        get { lock.withLock { _operations } }
        set { lock.withLock { _operations = newValue } }
    }

    var violations: [String] { lock.withLock { _violations } }
    var figures: [String] { lock.withLock { _figures } }

    /// Records and prints a broken invariant.
    func violation(_ text: String) {
        lock.withLock { _violations.append(text) }
        print("VIOLATION: \(text)")
    }

    /// Records a measured figure (printed in the summary).
    func figure(_ text: String) {
        lock.withLock { _figures.append(text) }
    }
}
