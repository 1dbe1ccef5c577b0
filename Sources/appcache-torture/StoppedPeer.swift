import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stops a child process at a moment it holds a root's lock file, as a suspended or stopped
/// extension would: the child is stopped (`SIGSTOP`) at random moments until, stopped, it is
/// found holding the lock (nobody else can take it for a while), or let go on (`SIGCONT`).
enum StoppedPeer {
    /// Stops `child` while it holds the `flock` of the lock file at `path`.
    ///
    /// - Returns: whether it is stopped holding the lock (the caller resumes it); `false` when
    ///   it was never caught holding it (it runs on).
    static func stop(_ child: ChildProcess, whileHolding path: String, random: inout SeededRandom, attempts: Int = 400) -> Bool {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        for _ in 0..<attempts {
            guard child.process.isRunning else { return false }
            child.stop()
            waitUntilStopped(child.pid)
            if isHeld(descriptor) { return true }
            child.resume()
            usleep(UInt32(500 + random.next() % 3000))
        }
        return false
    }

    /// Whether another open file holds the lock of `descriptor`'s file throughout 50 ms (the
    /// stopped child, not a running process's short batch).
    private static func isHeld(_ descriptor: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(0.05)
        while Date() < deadline {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                flock(descriptor, LOCK_UN)
                return false
            }
            usleep(500)
        }
        return true
    }

    /// Waits (100 ms at most) until the process's state in `/proc` says stopped.
    private static func waitUntilStopped(_ pid: Int32) {
        #if os(Linux)
        for _ in 0..<100 {
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")"),
                stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).first == "T"
            {
                return
            }
            usleep(1000)
        }
        #else
        usleep(20_000)
        #endif
    }
}
