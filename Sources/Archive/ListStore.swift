import GRDB

/// The people a person follows in the web app, their order, and settings.
/// (Filled in by the web-app work.)
enum ListStore {
    static func registerMigrations(in migrator: inout DatabaseMigrator) {}
}
