/// The one error type AppCache throws and reports.
///
/// Switch on ``code`` to react; ``message`` is for people. The cache name, key and path tell
/// which collection and which file were involved, and ``underlyingError`` holds the cause (an
/// operating system error, a `DecodingError`, ...). New codes may be added in any release, so a
/// `switch` over codes needs a `default` case.
///
/// ```swift
/// do {
///     try cache.cacheItems(items)
/// } catch let error as AppCacheError where error.code == .noSpace {
///     showDiskFullWarning()
/// } catch {
///     print("Not cached: \(error)")
/// }
/// ```
public struct AppCacheError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value that stays stable across releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The code's name, as in `noSpace`.
        public var description: String { name }

        /// The items could not be encoded (for example a `Double.nan`, which JSON cannot hold
        /// and the binary codec refuses as JSON does, or items nested more than 511 containers
        /// deep). Nothing was written; what was cached before is untouched.
        public static let encodingFailed = Code("encodingFailed")
        /// A model type's `encode(to:)` uses its containers in a way the binary codec cannot
        /// follow as it streams (for example it writes to a container after one nested in it
        /// was closed), so its collections are stored as JSON, which gives back the same items
        /// more slowly. Reported to the diagnostics hook once per type and cache; nothing
        /// failed. The message says what the codec met.
        public static let storedAsJSON = Code("storedAsJSON")
        /// An archive passed its checksum but its items could not be used: a ``ModelUpgrade``'s
        /// conversion threw. Reported to the diagnostics hook; the read is a miss and the file
        /// is removed, unless pinned (then it stays, reported once per process).
        public static let decodingFailed = Code("decodingFailed")
        /// An archive of the type's current `schemaVersion` (or of an older one, as its
        /// upgrade's old shape) passed its checksum but does not decode: the model was most
        /// likely changed without a `schemaVersion` bump. The message names the type, and the
        /// path and reason inside the items ("`items[3].price`: expected Double, found
        /// String"). Reported to the diagnostics hook; the read is a miss and the file is
        /// removed, unless pinned (then it stays, reported once per process, and is read again
        /// once the model decodes it or declares an upgrade).
        public static let modelMismatch = Code("modelMismatch")
        /// A file was empty, truncated, damaged or not an AppCache archive. Reported to the
        /// diagnostics hook; the read is a miss and the file is removed.
        public static let corruptArchive = Code("corruptArchive")
        /// An archive was written for an older `schemaVersion` of its model type that the type
        /// declares no ``ModelUpgrade`` from. Reported to the diagnostics hook; the read is a
        /// miss and the file is removed, unless pinned (then it stays, reported once per
        /// process). An archive of a newer version is a miss, neither reported nor removed.
        public static let schemaMismatch = Code("schemaMismatch")
        /// The operating system refused access (permissions, a read-only volume).
        public static let permissionDenied = Code("permissionDenied")
        /// The volume is full or the user's quota is used up.
        public static let noSpace = Code("noSpace")
        /// A file stands where the cache needs a directory.
        public static let notADirectory = Code("notADirectory")
        /// Reading, writing, renaming or removing a file failed for another reason; the
        /// underlying error tells which.
        public static let ioFailure = Code("ioFailure")
        /// A directory given as a cache root holds no AppCache data.
        public static let notACache = Code("notACache")
        /// There is no cached collection to act on: pinning a collection that is not cached, or
        /// a load's fetch answering `.notModified` when nothing is cached.
        public static let notCached = Code("notCached")
        /// Data of another app schema version could not be moved out of view when the cache
        /// opened. The cache refuses to open rather than mix old and new data.
        public static let versionWipeFailed = Code("versionWipeFailed")
        /// A configuration value the cache cannot work with: an empty `schemaVersion`, a
        /// negative limit or delay. Thrown by ``AppCache/init(configuration:)``; nothing was
        /// opened.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A user id the cache cannot store: empty, or longer than an archive header holds
        /// (64 KiB of UTF-8). Thrown by ``AppCache/init(configuration:)`` and
        /// ``AppCache/switchUser(to:)``; the current user is unchanged.
        public static let invalidUser = Code("invalidUser")
        /// A key longer than an archive header holds (64 KiB of UTF-8). Nothing was cached.
        public static let invalidKey = Code("invalidKey")
        /// `updateItems` was called from inside an `updateItems` of the same collection (which
        /// would undo it). Nothing was changed.
        public static let nestedUpdate = Code("nestedUpdate")
        /// `updateItems` gave up: the collection kept changing under it, in this process or
        /// others, through every one of its attempts (each reads, transforms and writes only
        /// if nothing came between). Until this round such an update threw `nestedUpdate`.
        public static let updateContention = Code("updateContention")
        /// The disk cannot be written now: another process (or instance) held the root's lock
        /// file for longer than ``AppCache/Configuration/lockTimeout`` (it may be suspended or
        /// stopped), or the system is suspending this process (it said the app's background
        /// time is up, or an extension's host went to the background), when no disk write
        /// starts until the app is active again. Nothing was written; a collection waiting in
        /// memory stays there for the next flush. The error's path names the lock file.
        public static let busy = Code("busy")
        /// Another app schema version opened the root and wiped this cache's version (an app
        /// update, with an extension of the old version still running). The cache no longer
        /// writes (making the old version's directory again would mix versions), every write
        /// throws this code, memory is emptied and reads miss; `diagnostics` hears of it once.
        /// Reopen the cache with the new ``AppCache/Configuration/schemaVersion``.
        public static let versionRemoved = Code("versionRemoved")
        /// ``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)`` found no cursor to go on
        /// from: no first page was stored, or the last page was reached. Nothing was fetched.
        public static let noNextPage = Code("noNextPage")
        /// `load` or `watch` was called from inside the fetch of the same collection (same model
        /// type, key and user; directly, or through the fetches of other collections that fetch
        /// loads): it would have waited for the fetch it was called from, which waits for it.
        /// The stream throws this at once; nothing was fetched for it. A fetch has the cached
        /// items in its ``LoadContext``; loading another collection from a fetch is fine.
        public static let nestedLoad = Code("nestedLoad")
    }

    /// What went wrong.
    public var code: Code
    /// A sentence that says what went wrong and what happened to the data.
    public var message: String
    /// The cache name of the model type involved, if any.
    public var cacheName: String?
    /// The key of the collection involved, if any (`nil` also for a type's default collection).
    public var key: String?
    /// The file or directory involved, if any.
    public var path: String?
    /// The error that caused this one, if any.
    public var underlyingError: (any Error)?

    /// Creates an error. AppCache creates its own; this is public for tests and wrappers.
    public init(
        code: Code,
        message: String,
        cacheName: String? = nil,
        key: String? = nil,
        path: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.cacheName = cacheName
        self.key = key
        self.path = path
        self.underlyingError = underlyingError
    }

    /// `error` as an `AppCacheError`: itself when it is one, else an `ioFailure` that says it
    /// and keeps it as the cause (what the cache's own work, which throws only `AppCacheError`s
    /// and `SystemError`s, reports of an error from elsewhere).
    ///
    /// - Parameter message: the message of an error that was not an `AppCacheError`; `nil` for
    ///   the error's own description.
    init(wrapping error: any Error, message: String? = nil) {
        if let error = error as? AppCacheError {
            self = error
        } else {
            self.init(code: .ioFailure, message: message ?? "\(error)", underlyingError: error)
        }
    }

    /// The code, the message and whatever context is known, on one line.
    public var description: String {
        var text = "AppCacheError.\(code): \(message)"
        if let cacheName { text += " [cache: \(cacheName)]" }
        if let key { text += " [key: \(key)]" }
        if let path { text += " [path: \(path)]" }
        if let underlyingError { text += " [cause: \(underlyingError)]" }
        return text
    }
}
