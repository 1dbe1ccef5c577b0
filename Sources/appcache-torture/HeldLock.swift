import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The exclusive `flock` of a root's lock file (`version-<v>/.lock`), taken from outside the
/// cache: while it is held no batch of disk changes runs in any process, so the disk can be
/// measured between batches, or a process's background batch kept from running.
final class HeldLock {
    private let descriptor: Int32
    private(set) var isHeld = false

    /// Opens the lock file at `path` (it must exist) without locking it.
    ///
    /// - Throws: `POSIXError` when it cannot be opened.
    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(descriptor)  // releases the lock too
    }

    /// Takes the lock, waiting for the batch that holds it.
    func lock() {
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        isHeld = true
    }

    /// Lets the lock go.
    func unlock() {
        flock(descriptor, LOCK_UN)
        isHeld = false
    }

    /// Runs `body` holding the lock.
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
