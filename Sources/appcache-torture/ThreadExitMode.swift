import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache's last reference let go while its thread exits: a `Thread` whose closure holds the
/// cache runs updates from `DispatchQueue.concurrentPerform` workers, and Foundation releases
/// the closure (and so the cache) in the thread's exit, after libdispatch has torn down its
/// data of that thread. On Linux a dispatch call from `deinit` then makes the exit free
/// libdispatch's continuations twice: the child aborts in `malloc` or crashes later. Each
/// released cache also has tasks following its events and one of its collections, and a sender
/// waiting on its server for a queued change: ending those resumes and cancels tasks, which goes
/// through Dispatch too. Each child must end cleanly, every update must be on disk (the `deinit`
/// at the thread's exit writes what is dirty), every stream must end, and every queued change
/// must still be queued (none was sent: the server never answers).
struct ThreadExitMode {
    let base: URL
    let quick: Bool
    let report: Report

    var children: Int { quick ? 4 : 40 }
    static let rounds = 25
    static let updates = 12

    func run() throws {
        for index in 0..<children {
            let root = base.appending(path: "thread-exit-\(index)", directoryHint: .isDirectory)
            let child = try ChildProcess(arguments: [
                "--child", "thread-exit", "--root", root.path(percentEncoded: false), "--rounds", String(Self.rounds),
                "--updates", String(Self.updates),
            ])
            report.episodes += 1
            if !child.wait(timeout: 300) { report.violation("thread-exit \(index): the child hung") }
            if !child.exitedCleanly {
                report.violation("thread-exit \(index): the child ended with \(child.termination) (a cache released as its thread exited)")
            }
            for line in child.printed where line.hasPrefix("VIOLATION") {
                report.violation("thread-exit \(index): \(line.dropFirst("VIOLATION ".count))")
            }
            var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "thread-exit")
            configuration.flushesAtExit = false
            let cache = try AppCache(configuration: configuration)
            var lost = 0
            for round in 0..<Self.rounds {
                for worker in 0..<2 {
                    report.operations += 1
                    let items = try cache.getCachedItems(MenuItem.self, forKey: ThreadExitRelease.key(round: round, worker: worker)) ?? []
                    if items != ThreadExitRelease.expected(round: round, worker: worker, updates: Self.updates) {
                        lost += 1
                    }
                }
            }
            if lost > 0 {
                report.violation("thread-exit \(index): \(lost) of \(2 * Self.rounds) collections not as updated after their cache was released at its thread's exit")
            }
            cache.registerMutationKind(ThreadExitNudge.self)
            report.operations += 1
            if cache.pendingMutations.count != Self.rounds {
                report.violation("thread-exit \(index): \(cache.pendingMutations.count) queued changes, not \(Self.rounds) (one per released cache, never sent)")
            }
        }
    }
}

/// A queued change each released cache leaves for the next launch: its sender is waiting on
/// a server that never answers when the cache goes.
struct ThreadExitNudge: CacheMutation {
    static let mutationName = "thread-exit-nudge"
    var round: Int
    var key: String? { "nudged" }
    func apply(to items: inout [MenuItem]) { items.append(MenuItem.sampleMenu(count: 1, seed: round)[0]) }
}

/// The child side of the thread-exit mode.
enum ThreadExitRelease {
    static func key(round: Int, worker: Int) -> String { "r\(round)-w\(worker)" }

    /// The items a worker's collection holds after its updates, in order.
    static func expected(round: Int, worker: Int, updates: Int) -> [MenuItem] {
        (0..<updates).map { step in MenuItem.sampleMenu(count: 1, seed: (round * 2 + worker) * 1000 + step)[0] }
    }

    static func run(root: URL, rounds: Int, updates: Int) throws -> Never {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "thread-exit")
        // Dirty in memory until the cache goes: its deinit, at the thread's exit, writes them.
        configuration.writeBackDelay = nil
        configuration.observesApplicationLifecycle = false
        for round in 0..<rounds {
            var cache: AppCache? = try AppCache(configuration: configuration)
            weak let released = cache
            let go = DispatchSemaphore(value: 0)
            let failures = Shared<[String]>([])
            // Tasks following the cache's events and one of its collections (resumed when the
            // cache goes), and a sender inside its send (cancelled when the cache goes).
            let events = cache!.events
            let followed = cache!.updates(MenuItem.self, forKey: key(round: round, worker: 0))
            let streamEnded = DispatchSemaphore(value: 0)
            Task {
                for await _ in events {}
                streamEnded.signal()
            }
            Task {
                for await _ in followed {}
                streamEnded.signal()
            }
            let sending = Shared(false)
            cache!.registerSender(for: ThreadExitNudge.self) { _, _ in
                sending.withLock { $0 = true }
                try await Task.sleep(for: .seconds(600))
            }
            _ = try cache!.enqueue(ThreadExitNudge(round: round))
            let sendBy = Date().addingTimeInterval(60)
            while !sending.withLock({ $0 }) && Date() < sendBy { usleep(500) }
            if !sending.withLock({ $0 }) { emit("VIOLATION round \(round): the queued change's send did not begin within a minute") }
            // Detached: nothing else holds the `Thread`, so Foundation releases it (and its
            // closure) in the thread's exit.
            Thread.detachNewThread { [cache] in
                go.wait()
                let caller = pthread_self()
                DispatchQueue.concurrentPerform(iterations: 2) { worker in
                    for (step, item) in expected(round: round, worker: worker, updates: updates).enumerated() {
                        do {
                            _ = try cache?.updateItems(MenuItem.self, forKey: key(round: round, worker: worker)) { $0.append(item) }
                        } catch {
                            failures.withLock { $0.append("round \(round) worker \(worker) step \(step): \(error)") }
                        }
                    }
                    // The calling thread finishes last, so that it frees the apply's own
                    // continuation into its cache: what a second free at its exit would hit.
                    if pthread_equal(pthread_self(), caller) != 0 { usleep(2_000) }
                }
            }
            // From here the thread's closure holds the last reference.
            cache = nil
            go.signal()
            let deadline = Date().addingTimeInterval(60)
            while released != nil && Date() < deadline { usleep(500) }
            if released != nil { emit("VIOLATION round \(round): the cache was not released within a minute of its thread's work") }
            for stream in ["events", "updates"] where streamEnded.wait(timeout: .now() + 60) == .timedOut {
                emit("VIOLATION round \(round): a stream (\(stream) or the other) did not end within a minute of its cache's release")
            }
            for failure in failures.withLock({ $0 }) { emit("VIOLATION updateItems threw: \(failure)") }
        }
        // The exit flush waits for a cache whose deinit is still under way.
        exit(0)
    }
}
