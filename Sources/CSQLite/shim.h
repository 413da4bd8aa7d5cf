#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>
#include <string.h>
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

/* ---- ingestd_sample_rows: a batch of sample rows in the caller's memory, read as a table ----
   An eponymous, read-only virtual table for one statement: `SELECT ... FROM
   ingestd_sample_rows(?)` with the parameter bound by csqlite_bind_sample_rows. One
   `INSERT ... SELECT` then stores a whole batch (SQLite opens the table's cursors and reads the
   AUTOINCREMENT counter once per statement, not once per row). The rows must stay in place and
   unchanged until the statement is reset. A parameter bound any other way reads as no rows. */

/* One samples row. Text columns are offsets into the batch's `text`. */
typedef struct {
    unsigned char uuid[16];
    sqlite3_int64 type;
    double value;
    double start_time;
    double end_time;
    sqlite3_int64 source;
    sqlite3_int64 device;          /* 0: NULL */
    sqlite3_int64 person;          /* 0: NULL */
    int device_local_id_offset;
    int device_local_id_length;
    int metadata_offset;
    int metadata_length;           /* below 0: NULL */
} csqlite_sample_row;

/* A batch: `count` rows and the bytes their text columns point into. */
typedef struct {
    const csqlite_sample_row *rows;
    sqlite3_int64 count;
    const char *text;
} csqlite_sample_rows;

typedef struct {
    sqlite3_vtab_cursor base;
    const csqlite_sample_rows *batch;
    sqlite3_int64 index;
} csqlite_sample_rows_cursor;

enum { CSQLITE_SAMPLE_ROWS_BATCH_COLUMN = 10 };

static inline const char *csqlite_sample_rows_pointer_type(void) { return "ingestd_sample_rows"; }

static inline int csqlite_sample_rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                                              sqlite3_vtab **out, char **error) {
    (void)aux; (void)argc; (void)argv; (void)error;
    int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(uuid BLOB, type INTEGER, value REAL, start_time REAL, "
                                      "end_time REAL, source INTEGER, device INTEGER, device_local_id TEXT, "
                                      "metadata TEXT, person INTEGER, batch HIDDEN)");
    if (rc != SQLITE_OK) return rc;
    sqlite3_vtab *table = (sqlite3_vtab *)sqlite3_malloc(sizeof(sqlite3_vtab));
    if (!table) return SQLITE_NOMEM;
    memset(table, 0, sizeof(*table));
    /* It reads caller memory: only top-level statements may use it, never a trigger or view. */
    sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
    *out = table;
    return SQLITE_OK;
}

static inline int csqlite_sample_rows_disconnect(sqlite3_vtab *table) {
    sqlite3_free(table);
    return SQLITE_OK;
}

/* Usable only with the batch given (`ingestd_sample_rows(?)`). */
static inline int csqlite_sample_rows_best_index(sqlite3_vtab *table, sqlite3_index_info *info) {
    (void)table;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *constraint = &info->aConstraint[i];
        if (constraint->iColumn == CSQLITE_SAMPLE_ROWS_BATCH_COLUMN && constraint->op == SQLITE_INDEX_CONSTRAINT_EQ
            && constraint->usable) {
            info->aConstraintUsage[i].argvIndex = 1;
            info->aConstraintUsage[i].omit = 1;
            info->idxNum = 1;
            info->estimatedCost = 1;
            info->estimatedRows = 1000;
            return SQLITE_OK;
        }
    }
    return SQLITE_CONSTRAINT;
}

static inline int csqlite_sample_rows_open(sqlite3_vtab *table, sqlite3_vtab_cursor **out) {
    (void)table;
    csqlite_sample_rows_cursor *cursor = (csqlite_sample_rows_cursor *)sqlite3_malloc(sizeof(csqlite_sample_rows_cursor));
    if (!cursor) return SQLITE_NOMEM;
    memset(cursor, 0, sizeof(*cursor));
    *out = &cursor->base;
    return SQLITE_OK;
}

static inline int csqlite_sample_rows_close(sqlite3_vtab_cursor *base) {
    sqlite3_free(base);
    return SQLITE_OK;
}

static inline int csqlite_sample_rows_filter(sqlite3_vtab_cursor *base, int idxNum, const char *idxStr,
                                             int argc, sqlite3_value **argv) {
    (void)idxStr;
    csqlite_sample_rows_cursor *cursor = (csqlite_sample_rows_cursor *)base;
    cursor->index = 0;
    cursor->batch = (idxNum == 1 && argc == 1)
        ? (const csqlite_sample_rows *)sqlite3_value_pointer(argv[0], csqlite_sample_rows_pointer_type()) : 0;
    return SQLITE_OK;
}

static inline int csqlite_sample_rows_next(sqlite3_vtab_cursor *base) {
    ((csqlite_sample_rows_cursor *)base)->index++;
    return SQLITE_OK;
}

static inline int csqlite_sample_rows_eof(sqlite3_vtab_cursor *base) {
    const csqlite_sample_rows_cursor *cursor = (const csqlite_sample_rows_cursor *)base;
    return !cursor->batch || cursor->index >= cursor->batch->count;
}

static inline int csqlite_sample_rows_column(sqlite3_vtab_cursor *base, sqlite3_context *context, int column) {
    const csqlite_sample_rows_cursor *cursor = (const csqlite_sample_rows_cursor *)base;
    const csqlite_sample_row *row = &cursor->batch->rows[cursor->index];
    switch (column) {
    case 0: sqlite3_result_blob(context, row->uuid, 16, SQLITE_STATIC); break;
    case 1: sqlite3_result_int64(context, row->type); break;
    case 2: sqlite3_result_double(context, row->value); break;
    case 3: sqlite3_result_double(context, row->start_time); break;
    case 4: sqlite3_result_double(context, row->end_time); break;
    case 5: sqlite3_result_int64(context, row->source); break;
    case 6: if (row->device) sqlite3_result_int64(context, row->device); else sqlite3_result_null(context); break;
    case 7:
        sqlite3_result_text(context, cursor->batch->text + row->device_local_id_offset, row->device_local_id_length,
                            SQLITE_STATIC);
        break;
    case 8:
        if (row->metadata_length < 0) sqlite3_result_null(context);
        else sqlite3_result_text(context, cursor->batch->text + row->metadata_offset, row->metadata_length, SQLITE_STATIC);
        break;
    case 9: if (row->person) sqlite3_result_int64(context, row->person); else sqlite3_result_null(context); break;
    default: sqlite3_result_null(context); break;
    }
    return SQLITE_OK;
}

static inline int csqlite_sample_rows_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid) {
    *rowid = ((const csqlite_sample_rows_cursor *)base)->index;
    return SQLITE_OK;
}

/* Makes `ingestd_sample_rows` known to `db` (once per connection). */
static inline int csqlite_register_sample_rows(sqlite3 *db) {
    static const sqlite3_module module = {
        .iVersion = 0,
        .xCreate = 0, /* eponymous only: no CREATE VIRTUAL TABLE */
        .xConnect = csqlite_sample_rows_connect,
        .xBestIndex = csqlite_sample_rows_best_index,
        .xDisconnect = csqlite_sample_rows_disconnect,
        .xDestroy = csqlite_sample_rows_disconnect,
        .xOpen = csqlite_sample_rows_open,
        .xClose = csqlite_sample_rows_close,
        .xFilter = csqlite_sample_rows_filter,
        .xNext = csqlite_sample_rows_next,
        .xEof = csqlite_sample_rows_eof,
        .xColumn = csqlite_sample_rows_column,
        .xRowid = csqlite_sample_rows_rowid,
    };
    return sqlite3_create_module_v2(db, "ingestd_sample_rows", &module, 0, 0);
}

/* Binds `batch` to parameter `index` of `statement`, for `ingestd_sample_rows(?)`. */
static inline int csqlite_bind_sample_rows(sqlite3_stmt *statement, int index, const csqlite_sample_rows *batch) {
    return sqlite3_bind_pointer(statement, index, (void *)batch, csqlite_sample_rows_pointer_type(), 0);
}
#endif
