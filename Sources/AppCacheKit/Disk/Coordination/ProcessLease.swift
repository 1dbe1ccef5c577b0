#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A claim of one process on a lock-file word until a moment: its process id and the second,
/// on the wall clock, when the claim ends, in one 64-bit word (0: no claim).
///
/// What the presence slots (``PeerPresence``) and the sender lease (``SenderLease``) hold. A
/// claim whose end has passed, or whose process is gone (`kill(pid, 0)`), is over: a process
/// that dies loses its claims at once, one that is suspended when they run out. The word is
/// untrusted like any file's byte: a damaged one is a claim that ends or a process that is not
/// there, never a crash.
struct ProcessLease: Equatable {
    /// The end of a claim that lasts as long as its process lives.
    static let forLife = UInt32.max

    var process: UInt32
    /// When the claim ends, in seconds since 1970 (wrapping; ``forLife``: never).
    var end: UInt32

    init(process: UInt32, end: UInt32) {
        self.process = process
        self.end = end
    }

    /// The claim a word holds.
    init(word: UInt64) {
        process = UInt32(truncatingIfNeeded: word >> 32)
        end = UInt32(truncatingIfNeeded: word)
    }

    /// The word that holds the claim.
    var word: UInt64 { UInt64(process) << 32 | UInt64(end) }

    /// The wall clock in seconds, as claims count it.
    static var now: UInt32 { UInt32(truncatingIfNeeded: time(nil)) }

    /// This process's id.
    static var currentProcess: UInt32 { UInt32(truncatingIfNeeded: getpid()) }

    /// Whether the claim runs at `now` and its process is alive (or may be: a process this one
    /// may not signal, `EPERM`, is alive).
    func isLive(now: UInt32) -> Bool {
        guard process > 0, end > now else { return false }
        return kill(pid_t(bitPattern: process), 0) == 0 || errno == EPERM
    }
}
