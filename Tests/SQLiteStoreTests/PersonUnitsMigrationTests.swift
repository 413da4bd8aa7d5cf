import Foundation
import HealthModel
import Pipeline
import Testing

@testable import SQLiteStore

/// Schema 15: each person's measurement system. A schema-14 store's people open with none set
/// (they follow the configuration), a person's choice is kept and can be cleared, and the column
/// takes only the systems there are.
@Suite struct PersonUnitsMigrationTests {
    @Test func aSchema14StoresPeopleFollowTheConfigurationUntilTheyChoose() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("fourteen.sqlite").path
        let schemaFourteen = Migrator(applicationID: HealthStore.applicationID,
                                      migrations: Array(HealthStore.migrator.migrations.prefix(14)))
        let old = try schemaFourteen.openDatabase(path: path, mode: .createIfMissing)
        try old.execute(sql: "INSERT INTO people(name, profile, created_at) VALUES ('ann', '{}', 0), ('bob', '{}', 0)")
        #expect(try old.prepare("PRAGMA user_version").firstRow { $0.int(at: 0) } == 14)
        old.close()

        let store = try HealthStore(path: path)
        defer { store.close() }
        func units() throws -> [String: UnitSystem?] {
            Dictionary(uniqueKeysWithValues: try store.people().filter { ["ann", "bob"].contains($0.name) }.map { ($0.name, $0.units) })
        }
        #expect(try units() == ["ann": nil, "bob": nil])
        try store.setUnits(.us, of: try store.person(named: "bob"))
        #expect(try units() == ["ann": nil, "bob": .us])
        #expect(try store.unitSystem(ofPerson: "bob") == .us)
        #expect(try store.queryUnitSystem(ofPerson: "ann") == nil)
        #expect(try store.unitSystem(ofPerson: "nobody") == nil)
        try store.setUnits(nil, of: try store.person(named: "bob"))
        #expect(try store.unitSystem(ofPerson: "bob") == nil)
        // The column refuses a system that does not exist (another writer's bug stays out).
        #expect(throws: (any Error).self) { try store.db.execute(sql: "UPDATE people SET units = 'imperial'") }
    }
}
