extension ReadableVersions {
    /// The versions `Model` reads: its ``CacheableModel/schemaVersion`` and every version it
    /// declares a ``ModelUpgrade`` from.
    init<Model: CacheableModel>(of type: Model.Type) {
        self.init(current: Int64(Model.schemaVersion), older: Set(Model.upgrades.map { Int64($0.version) }))
    }
}
