#include "../CLibPQ/shim.h"
#include <dlfcn.h>
#include "loader.h"

/* The libpq functions ingestd calls (Sources/PostgresStore). */
#define PQ_FUNCTIONS(X) X(PQclear) X(PQcmdTuples) X(PQconnectdbParams) X(PQerrorMessage) X(PQexec) \
    X(PQexecParams) X(PQfinish) X(PQfname) X(PQgetResult) X(PQgetisnull) X(PQgetvalue) X(PQnfields) \
    X(PQntuples) X(PQputCopyData) X(PQputCopyEnd) X(PQresultErrorField) X(PQresultErrorMessage) \
    X(PQresultStatus) X(PQsetNoticeProcessor) X(PQstatus)

CSINK_TABLE(PQ_FUNCTIONS, csink_resolve_pq)

#define READY csink_ensure(CSINK_PQ)

CSINK_HIDDEN void PQclear(PGresult *res) { if (READY) table.PQclear(res); }
CSINK_HIDDEN char *PQcmdTuples(PGresult *res) { return READY ? table.PQcmdTuples(res) : ""; }
CSINK_HIDDEN PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    return READY ? table.PQconnectdbParams(keywords, values, expand_dbname) : NULL;
}
CSINK_HIDDEN char *PQerrorMessage(const PGconn *conn) { return READY ? table.PQerrorMessage(conn) : "libpq is not loaded"; }
CSINK_HIDDEN PGresult *PQexec(PGconn *conn, const char *query) { return READY ? table.PQexec(conn, query) : NULL; }
CSINK_HIDDEN PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                                    const char *const *paramValues, const int *paramLengths,
                                    const int *paramFormats, int resultFormat) {
    return READY ? table.PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                                      resultFormat)
                 : NULL;
}
CSINK_HIDDEN void PQfinish(PGconn *conn) { if (READY) table.PQfinish(conn); }
CSINK_HIDDEN char *PQfname(const PGresult *res, int field_num) { return READY ? table.PQfname(res, field_num) : NULL; }
CSINK_HIDDEN PGresult *PQgetResult(PGconn *conn) { return READY ? table.PQgetResult(conn) : NULL; }
CSINK_HIDDEN int PQgetisnull(const PGresult *res, int tup_num, int field_num) {
    return READY ? table.PQgetisnull(res, tup_num, field_num) : 1;
}
CSINK_HIDDEN char *PQgetvalue(const PGresult *res, int tup_num, int field_num) {
    return READY ? table.PQgetvalue(res, tup_num, field_num) : "";
}
CSINK_HIDDEN int PQnfields(const PGresult *res) { return READY ? table.PQnfields(res) : 0; }
CSINK_HIDDEN int PQntuples(const PGresult *res) { return READY ? table.PQntuples(res) : 0; }
CSINK_HIDDEN int PQputCopyData(PGconn *conn, const char *buffer, int nbytes) {
    return READY ? table.PQputCopyData(conn, buffer, nbytes) : -1;
}
CSINK_HIDDEN int PQputCopyEnd(PGconn *conn, const char *errormsg) { return READY ? table.PQputCopyEnd(conn, errormsg) : -1; }
CSINK_HIDDEN char *PQresultErrorField(const PGresult *res, int fieldcode) {
    return READY ? table.PQresultErrorField(res, fieldcode) : NULL;
}
CSINK_HIDDEN char *PQresultErrorMessage(const PGresult *res) {
    return READY ? table.PQresultErrorMessage(res) : "libpq is not loaded";
}
CSINK_HIDDEN ExecStatusType PQresultStatus(const PGresult *res) { return READY ? table.PQresultStatus(res) : PGRES_FATAL_ERROR; }
CSINK_HIDDEN PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) {
    return READY ? table.PQsetNoticeProcessor(conn, proc, arg) : NULL;
}
CSINK_HIDDEN ConnStatusType PQstatus(const PGconn *conn) { return READY ? table.PQstatus(conn) : CONNECTION_BAD; }
