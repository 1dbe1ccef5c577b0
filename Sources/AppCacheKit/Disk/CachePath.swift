/// A file the cache may touch, relative to the version directory: the only way to name one.
///
/// Every path the cache creates, opens, renames or deletes inside a version directory is a
/// `CachePath`, built either from the layout's own names (``CacheLayout``) or from untrusted
/// text (a journal line) through ``init(relative:)``, which accepts exactly the forms the layout
/// produces: `NAME` (a file of the version directory itself, such as `.index`), `shared/NAME` or
/// `user-ID/NAME`, where every part is one file name: not empty, not `.` or `..`, without `/`
/// or NUL, and at most ``maximumComponentLength`` bytes. The file system layer opens each part
/// relative to its directory's descriptor and never follows a symbolic link, so a `CachePath`
/// cannot reach outside the version directory.
struct CachePath: Hashable, Sendable, CustomStringConvertible {
    /// The longest file name the cache accepts, in bytes (file systems allow 255).
    static let maximumComponentLength = 255

    /// The user directory (`shared` or `user-...`); `nil` for a file of the version directory.
    let directory: String?
    /// The file's name in that directory.
    let name: String

    /// A path from the layout's own names. The names must already be valid (the layout makes
    /// them so); this is checked in debug builds.
    init(directory: String?, name: String) {
        assert(Self.isValidComponent(name) && directory.map(Self.isValidDirectory) ?? true, "a layout name is a valid path")
        self.directory = directory
        self.name = name
    }

    /// The path `relative` names, if it has one of the forms the layout produces.
    ///
    /// - Complexity: O(n) in the length of `relative`.
    init?(relative: some StringProtocol) {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard Self.isValidComponent(parts[0]) else { return nil }
            directory = nil
            name = String(parts[0])
        case 2:
            guard Self.isValidDirectory(parts[0]), Self.isValidComponent(parts[1]) else { return nil }
            directory = String(parts[0])
            name = String(parts[1])
        default:
            return nil
        }
    }

    /// The path as the journal writes it: `directory/name`, or `name`.
    var relative: String {
        directory.map { $0 + "/" + name } ?? name
    }

    var description: String { relative }

    /// Whether `component` can be one file name of a directory: not empty, not `.` or `..`,
    /// without `/` or NUL, not too long.
    static func isValidComponent(_ component: some StringProtocol) -> Bool {
        let bytes = component.utf8
        guard !bytes.isEmpty, bytes.count <= maximumComponentLength, component != ".", component != ".." else { return false }
        return !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(0)
    }

    /// Whether `component` names a user directory the layout makes: `shared` or `user-...`.
    static func isValidDirectory(_ component: some StringProtocol) -> Bool {
        guard isValidComponent(component) else { return false }
        return component == CacheLayout.sharedDirectoryName
            || (component.hasPrefix(CacheLayout.userPrefix) && component.utf8.count > CacheLayout.userPrefix.utf8.count)
    }
}
