/// A model type whose collections ``AppCache`` can cache.
///
/// Conform a `Codable` value type and you are done; every requirement has a default.
///
/// ```swift
/// struct MenuItem: CacheableModel {
///     var itemId: String
///     var name: String
///     // Bump when a change to the stored properties makes old archives undecodable.
///     static var schemaVersion: Int { 2 }
/// }
/// ```
public protocol CacheableModel: Codable, Sendable {
    /// The name the type's archives are stored under, and the key of per-type staleness
    /// overrides in ``AppCache/Configuration``.
    ///
    /// Defaults to the type's name plus "s" (`MenuItems` for `MenuItem`). Two types of the same
    /// name in different modules share the default; give one of them its own name. Must not be
    /// empty.
    static var cacheName: String { get }

    /// How old this type's cached items may get before they count as stale; `nil` (the
    /// default) leaves it to the configuration.
    static var stalenessThreshold: Duration? { get }

    /// The version of this type's stored form, written into each archive. Defaults to 1.
    ///
    /// Bump it when a change to the stored properties makes old archives undecodable (a new
    /// property without a default in its decoding, a renamed or retyped one), and declare an
    /// ``upgrades`` entry for the old version to keep what people cached. An archive of an
    /// older version with no upgrade is a miss and is removed (kept if pinned); one of a newer
    /// version (the app was downgraded, or a newer build shares the root) is a miss and is left
    /// for the build that can read it.
    static var schemaVersion: Int { get }

    /// How to read archives written by older versions of this type. Default: none.
    ///
    /// See ``ModelUpgrade``. Versions not listed, and versions not older than
    /// ``schemaVersion``, are ignored.
    static var upgrades: [ModelUpgrade<Self>] { get }
}

extension CacheableModel {
    /// The type's name plus "s".
    public static var cacheName: String { "\(Self.self)s" }

    /// `nil`: the configuration decides.
    public static var stalenessThreshold: Duration? { nil }

    /// Version 1.
    public static var schemaVersion: Int { 1 }

    /// None.
    public static var upgrades: [ModelUpgrade<Self>] { [] }
}
