import Foundation

/// What a cache knows of one kind of queued change (one ``CacheMutation`` type): how to encode
/// and decode it (older versions through its upgrades), which collections it changes, how to
/// fold an accepted one into them, and the app's sender, once registered.
///
/// Thread safety: a value of `Sendable` closures; the cache keeps its kinds in its state.
struct MutationKind: Sendable {
    let name: String
    /// The model type of the collections it changes.
    let modelType: ObjectIdentifier
    /// That type's cache name (observers are told by it).
    let cacheName: String
    /// Whether its changes name item ids (an ``ItemMutation``): they apply to every collection
    /// of the model type, not to the one collection their key names.
    let isByID: Bool
    /// Decodes a stored change of the given version (`nil`: queued by a build that did not
    /// record versions).
    let decode: @Sendable (Data, _ version: Int?) throws -> any CacheMutation
    /// Applies an accepted change to the confirmed collections of the session's user it
    /// changes, where they are cached (read-modify-writes, each atomic across processes).
    let fold: @Sendable (Outbox, any CacheMutation, CacheSession) throws -> Void
    /// How the app sends it; `nil` until ``AppCache/registerSender(for:send:)``.
    var send: (@Sendable (any CacheMutation, UUID) async throws -> Void)?

    /// The kind of `type`.
    init<Mutation: CacheMutation>(_ type: Mutation.Type, cacheName: String) {
        name = Mutation.mutationName
        modelType = ObjectIdentifier(Mutation.Model.self)
        self.cacheName = cacheName
        isByID = Mutation.self is any ItemMutation.Type
        decode = { data, version in try Self.decode(Mutation.self, data, version: version) }
        fold = { outbox, change, session in
            guard let change = change as? Mutation else { return }
            try outbox.fold(change, for: session)
        }
    }

    /// The stored bytes of `mutation`.
    static func encode<Mutation: CacheMutation>(_ mutation: Mutation) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(mutation)
    }

    /// A stored change of `version`: through the type's upgrade for that version when it
    /// declares one, else as the current type; a change without a version as the current
    /// type, then through the upgrades, newest first.
    ///
    /// - Throws: the current type's decoding error when nothing reads it.
    static func decode<Mutation: CacheMutation>(_ type: Mutation.Type, _ data: Data, version: Int?) throws -> Mutation {
        let upgrades = version == Mutation.schemaVersion ? [] : Mutation.upgrades.filter { $0.version < Mutation.schemaVersion }
        if let version, let upgrade = upgrades.first(where: { $0.version == version }) {
            return try upgrade.decode(data)
        }
        do {
            return try JSONDecoder().decode(Mutation.self, from: data)
        } catch {
            guard version == nil else { throw error }
            for upgrade in upgrades.sorted(by: { $0.version > $1.version }) {
                if let upgraded = try? upgrade.decode(data) { return upgraded }
            }
            throw error
        }
    }
}
