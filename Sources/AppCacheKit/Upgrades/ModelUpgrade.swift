/// Reads the items of one older version of `Model` and converts them: what keeps people's
/// cached data across an app update that changes a model.
///
/// Declare one per older ``CacheableModel/schemaVersion`` the app may find on disk, each
/// converting straight to the current type from a legacy struct kept in the app for that
/// version:
///
/// ```swift
/// // The stored properties of versions 1 and 2, kept in the app for their upgrades.
/// struct MenuItemV1: Decodable, Sendable {
///     var id: String
///     var name: String
///     var price: Double
/// }
/// struct MenuItemV2: Decodable, Sendable {
///     var itemId: String
///     var name: String
///     var price: Decimal
/// }
///
/// struct MenuItem: CacheableModel {
///     var itemId: String
///     var name: String
///     var price: Decimal
///     var readingMinutes: Int
///
///     static var schemaVersion: Int { 3 }
///     static var upgrades: [ModelUpgrade<MenuItem>] {
///         [
///             ModelUpgrade(from: 1, decoding: MenuItemV1.self) { old in
///                 MenuItem(itemId: old.id, name: old.name, price: Decimal(old.price), readingMinutes: 3)
///             },
///             ModelUpgrade(from: 2, decoding: MenuItemV2.self) { old in
///                 MenuItem(itemId: old.itemId, name: old.name, price: old.price, readingMinutes: 3)
///             },
///         ]
///     }
/// }
/// ```
///
/// A read that finds an archive of version 1 or 2 decodes it as the old shape, converts every
/// item and returns current items; the collection keeps its cached date (an upgrade is not a
/// refresh), its validators, its pin and its expiry, and is written back in the current version
/// by the next flush (at once with write-through), replacing the old archive: the conversion
/// runs once.
///
/// Thread safety: `Sendable`; `convert` may run on any thread, for any number of reads at once.
public struct ModelUpgrade<Model: CacheableModel>: Sendable {
    /// The older `schemaVersion` this upgrade reads.
    public let version: Int
    /// Decodes a payload of that version with a codec and converts its items.
    let decodeAndConvert: @Sendable (PayloadCodec, UnsafeRawBufferPointer) throws -> [Model]

    /// Declares how to read archives of an older version.
    ///
    /// - Parameters:
    ///   - version: the older `schemaVersion`.
    ///   - old: that version's shape, decoded from the archive (a legacy struct kept in the app,
    ///     with the stored properties the type had then).
    ///   - convert: turns one old item into a current one. Throwing drops the collection: the
    ///     read is a miss, the archive is removed (kept if pinned) and `diagnostics` is told
    ///     with ``AppCacheError/Code/decodingFailed``.
    /// - Complexity: a read pays one decode of the old shape plus `convert` per item.
    public init<Old: Decodable & Sendable>(
        from version: Int, decoding old: Old.Type, convert: @escaping @Sendable (Old) throws -> Model
    ) {
        self.version = version
        decodeAndConvert = { codec, payload in
            let decoded: [Old]
            do {
                decoded = try codec.decodeItems(Old.self, fromBytes: payload)
            } catch {
                throw UpgradeFailure.decoding(error)
            }
            do {
                return try decoded.map(convert)
            } catch {
                throw UpgradeFailure.conversion(error)
            }
        }
    }

    /// Why an upgrade gave no items: the payload was not the old shape, or `convert` threw.
    enum UpgradeFailure: Error {
        case decoding(any Error)
        case conversion(any Error)
    }
}
