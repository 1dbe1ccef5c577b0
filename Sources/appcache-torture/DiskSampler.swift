import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Measures what the archive files and packs of a version directory take, over and over on a
/// thread of its own, while a writer works: the most seen, including in the middle of a batch
/// (which may pass the budget by its own writes until it ends).
final class DiskSampler: @unchecked Sendable {
    private let versionPath: String
    private let state = Shared((largest: 0, samples: 0, stopped: false))
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling `versionPath` (see ``RootChecks/diskBytes(versionPath:)``).
    init(versionPath: String) {
        self.versionPath = versionPath
        let thread = Thread { [self] in
            while !state.withLock({ $0.stopped }) {
                let bytes = RootChecks.diskBytes(versionPath: versionPath)
                state.withLock { state in
                    state.largest = max(state.largest, bytes)
                    state.samples += 1
                }
                usleep(500)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling.
    ///
    /// - Returns: the most bytes seen, and how many samples were taken.
    func stop() -> (largest: Int, samples: Int) {
        state.withLock { $0.stopped = true }
        finished.wait()
        return state.withLock { ($0.largest, $0.samples) }
    }
}
