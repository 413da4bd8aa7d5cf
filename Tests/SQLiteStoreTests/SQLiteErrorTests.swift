import Foundation
import Testing

@testable import SQLiteStore

@Suite("SQLiteError")
struct SQLiteErrorTests {
    @Test("a unique violation is classified and its description names the SQL but never the values")
    func uniqueViolationWithoutValues() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE s(uuid TEXT UNIQUE, note TEXT)")
        let insert = try connection.prepare("INSERT INTO s(uuid, note)\n   VALUES (?, ?)")
        try insert.bind("SECRET-UUID", at: 1)
        try insert.bind("SECRET-NOTE blood glucose 5.4", at: 2)
        try insert.execute()
        let error = #expect(throws: SQLiteError.self) { try insert.execute() }
        let found = try #require(error)
        #expect(found.code == 19)
        #expect(found.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(found.isConstraintViolation && found.isUniqueViolation)
        #expect(!found.isBusy && !found.isDiskFull && !found.isNotADatabase && !found.isReadOnly)
        #expect(found.sql == "INSERT INTO s(uuid, note)\n   VALUES (?, ?)")
        #expect(
            found.description
                == "SQLITE_CONSTRAINT (2067): UNIQUE constraint failed: s.uuid [sql: INSERT INTO s(uuid, note) VALUES (?, ?)]"
        )
        #expect(!found.description.contains("SECRET"))
        #expect(!"\(error as Any)".contains("SECRET"))
    }

    @Test("a primary key violation is a unique violation; NOT NULL is only a constraint violation")
    func otherConstraints() throws {
        let connection = try Connection.inMemory()
        try connection.execute(sql: "CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO p VALUES (1, 'a');")
        let primary = #expect(throws: SQLiteError.self) { try connection.execute(sql: "INSERT INTO p VALUES (1, 'b')") }
        #expect(primary?.isUniqueViolation == true)
        #expect(primary?.extendedCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        let notNull = #expect(throws: SQLiteError.self) { try connection.execute(sql: "INSERT INTO p VALUES (2, NULL)") }
        #expect(notNull?.isConstraintViolation == true)
        #expect(notNull?.isUniqueViolation == false)
        #expect(notNull?.extendedCode == 1299)  // SQLITE_CONSTRAINT_NOTNULL
    }

    @Test("the description is one line, and says which code it is")
    func descriptionFormatting() {
        let error = SQLiteError(code: 5, message: "database is locked", sql: "BEGIN\n\tIMMEDIATE")
        #expect(error.isBusy)
        #expect(error.description == "SQLITE_BUSY (5): database is locked [sql: BEGIN IMMEDIATE]")
        let noSQL = SQLiteError(code: 13, message: "database or disk is full")
        #expect(noSQL.isDiskFull)
        #expect(noSQL.description == "SQLITE_FULL (13): database or disk is full")
        let long = SQLiteError(code: 1, message: "x", sql: String(repeating: "a ", count: 500))
        #expect(long.description.count < 300)
        #expect(!long.description.contains("\n"))
        #expect(SQLiteError(code: 99, message: "odd").codeName == "SQLITE_99")
        #expect(SQLiteError(code: 26, message: "").isNotADatabase)
        #expect(SQLiteError(code: 8, message: "").isReadOnly)
    }
}
