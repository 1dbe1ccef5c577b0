import Foundation

/// Reads a queued change written by an older version of a ``CacheMutation`` type: what keeps a
/// change made offline alive across an app update that changes what it stores.
///
/// Declare one per older ``CacheMutation/schemaVersion`` a queued change may still carry, each
/// converting straight to the current type from a legacy struct kept in the app:
///
/// ```swift
/// struct BookmarkV1: Decodable, Sendable {
///     var post: PostV1
///     var isBookmarked: Bool
/// }
///
/// struct Bookmark: ItemMutation {
///     static let mutationName = "bookmark"
///     static var schemaVersion: Int { 2 }
///     static var upgrades: [MutationUpgrade<Bookmark>] {
///         [MutationUpgrade(from: 1, decoding: BookmarkV1.self) { old in
///             Bookmark(post: Post(upgrading: old.post), isBookmarked: old.isBookmarked)
///         }]
///     }
///     var post: Post
///     var isBookmarked: Bool
///     var itemIDs: [Post.ID] { [post.id] }
///     func apply(to item: inout Post) { item.isBookmarked = isBookmarked }
/// }
/// ```
///
/// The change keeps its id (the idempotency key every send of it carries), its place in the
/// queue and its attempts; its stored bytes stay as they are, so a rollback to the older
/// version still reads it.
///
/// Thread safety: `Sendable`; `convert` may run on any thread.
public struct MutationUpgrade<Mutation: CacheMutation>: Sendable {
    /// The older `schemaVersion` this upgrade reads.
    public let version: Int
    /// Decodes a stored change of that version and converts it.
    let decode: @Sendable (Data) throws -> Mutation

    /// Declares how to read changes of an older version.
    ///
    /// - Parameters:
    ///   - version: the older ``CacheMutation/schemaVersion``.
    ///   - old: that version's shape, decoded from the stored JSON.
    ///   - convert: turns the old change into a current one. Throwing leaves the change
    ///     undecodable: it is reported and waits (see ``CacheMutation/upgrades``).
    public init<Old: Decodable & Sendable>(from version: Int, decoding old: Old.Type, convert: @escaping @Sendable (Old) throws -> Mutation) {
        self.version = version
        decode = { data in try convert(JSONDecoder().decode(Old.self, from: data)) }
    }
}
