import Foundation

/// The user an app last signed in, recorded in the version directory (`.signed-in`) so that
/// its extensions can follow it (``AppCache/Configuration/followsSignedInUser``).
///
/// The file holds one byte saying whether someone is signed in (`u`) or not (`-`), then the
/// user id's UTF-8. It is written atomically (``DiskWriter/Batch/replace(_:at:synchronize:failure:)``)
/// inside a batch of disk changes, which moves the shared change count on and wakes every watching process.
/// Like every byte under the root it is untrusted: a file that is too long, not UTF-8, not a
/// regular file or of an unknown form reads as "nothing recorded".
struct SignedInUserRecord: RootRecordFile {
    static let path = CachePath(directory: nil, name: ".signed-in")
    /// The most bytes a record may take (a user id is at most 64 KiB, like a key).
    static let maximumSize = 1 + ArchiveHeader.maximumNameLength

    /// The user signed in; `nil` when the app signed out.
    var user: String?

    func encoded() -> Data {
        Self.encode(user)
    }

    /// What `user` is recorded as.
    static func encode(_ user: String?) -> Data {
        guard let user else { return Data("-".utf8) }
        return Data("u".utf8) + Data(user.utf8)
    }

    /// The recorded user; `.none` when nothing (valid) is recorded, `.some(nil)` when the app
    /// signed out.
    static func decode(_ bytes: Data) -> String?? {
        guard let first = bytes.first, bytes.count <= maximumSize else { return .none }
        switch first {
        case UInt8(ascii: "-") where bytes.count == 1: return .some(nil)
        case UInt8(ascii: "u") where bytes.count > 1:
            let rest = bytes.dropFirst()
            let user = String(decoding: rest, as: UTF8.self)
            guard user.utf8.elementsEqual(rest) else { return .none }  // not UTF-8
            return .some(user)
        default: return .none
        }
    }

    /// Reads the record from `store`'s version directory.
    static func read(from store: DiskStore) -> String?? {
        store.readRecordFile(at: path, maximumSize: maximumSize).flatMap(decode) ?? .none
    }
}
