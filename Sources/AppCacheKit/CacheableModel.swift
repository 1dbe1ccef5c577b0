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

    /// The version of this type's stored form, written into each archive. Archives of another
    /// version are never decoded: reading one is a miss, and the file is removed. Defaults to 1.
    static var schemaVersion: Int { get }
}

extension CacheableModel {
    /// The type's name plus "s".
    public static var cacheName: String { "\(Self.self)s" }

    /// `nil`: the configuration decides.
    public static var stalenessThreshold: Duration? { nil }

    /// Version 1.
    public static var schemaVersion: Int { 1 }
}
