import Foundation

/// What a cache knows of one kind of queued change (one ``CacheMutation`` type): how to encode
/// and decode it, which collections it changes, how to fold an accepted one into them, and the
/// app's sender, once registered.
///
/// Thread safety: a value of `Sendable` closures; the cache keeps its kinds in its state.
struct MutationKind: Sendable {
    let name: String
    /// The model type of the collections it changes.
    let modelType: ObjectIdentifier
    /// That type's cache name (observers are told by it).
    let cacheName: String
    let decode: @Sendable (Data) throws -> any CacheMutation
    /// Applies an accepted change to the confirmed collection of the session's user, if one is
    /// cached (a read-modify-write, atomic across processes).
    let fold: @Sendable (Outbox, any CacheMutation, CacheSession) throws -> Void
    /// How the app sends it; `nil` until ``AppCache/registerSender(for:send:)``.
    var send: (@Sendable (any CacheMutation, UUID) async throws -> Void)?

    /// The kind of `type`.
    init<Mutation: CacheMutation>(_ type: Mutation.Type, cacheName: String) {
        name = Mutation.mutationName
        modelType = ObjectIdentifier(Mutation.Model.self)
        self.cacheName = cacheName
        decode = { data in try JSONDecoder().decode(Mutation.self, from: data) }
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
}
