#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>
/* SQLITE_TRANSIENT / SQLITE_STATIC are casts of integers to function pointers: Swift cannot import them. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type csqlite_static(void) { return SQLITE_STATIC; }
/* sqlite3_db_config is variadic: fixed-arity wrappers for the options we use. */
static inline int csqlite_enable_foreign_keys(sqlite3 *db, int on) {
    int out = 0;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, on, &out);
}
static inline int csqlite_defensive(sqlite3 *db, int on) {
    int out = 0;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, &out);
}
/* sqlite3_config is variadic too. Memory statistics cost a global mutex on every allocation
   SQLite makes; nothing here reads them. Effective only before SQLite is first initialized. */
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
