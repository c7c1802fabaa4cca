/*-------------------------------------------------------------------------
 *
 * src/utils/node_connections.c
 *	  Running a command on every node of a Citus cluster, over connections
 *	  the worker keeps.
 *
 * Citus's run_command_on_all_nodes() opens a new connection to each node
 * at every call, and each is a new backend on that node: a fork, the
 * authentication, the libraries and catalog caches loaded again.  The
 * coordinator's worker asks every node about each of its tables twice a
 * second; on a machine of two cores those backends took a share of the
 * CPU the sources' writers had.  So the worker keeps one connection per
 * node (as postgres_fdw keeps its connections), made as Citus makes its
 * own -- the node's name and port from pg_dist_node, this database, the
 * extension's owner, citus.node_conninfo and the role's pg_dist_authinfo
 * -- and sends the command to all nodes at once.  Other backends (DDL)
 * close theirs when the call is done.
 *
 * A connection that is not idle (a call interrupted midway) or broken is
 * closed and made again at the next call.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq-fe.h"

#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "mt/utils/citus.h"
#include "mt/utils/extension.h"

/* a node as pg_dist_node names it, and this backend's connection to it */
typedef struct NodeConnection
{
	int			nodeid;
	char	   *host;			/* in TopMemoryContext */
	int			port;
	char	   *user;
	PGconn	   *conn;			/* NULL: none yet, or closed */
} NodeConnection;

/* this backend's connections, kept across calls by the worker only */
static List *connections = NIL;

static NodeConnection *
node_connection(int nodeid, const char *host, int port, const char *user)
{
	ListCell   *lc;
	NodeConnection *nc;
	MemoryContext old;

	foreach(lc, connections)
	{
		nc = lfirst(lc);
		if (nc->nodeid == nodeid && nc->port == port && strcmp(nc->host, host) == 0 &&
			strcmp(nc->user, user) == 0)
			return nc;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	nc = palloc0(sizeof(NodeConnection));
	nc->nodeid = nodeid;
	nc->host = pstrdup(host);
	nc->port = port;
	nc->user = pstrdup(user);
	connections = lappend(connections, nc);
	MemoryContextSwitchTo(old);
	return nc;
}

static void
close_connection(NodeConnection *nc)
{
	if (nc->conn)
		PQfinish(nc->conn);
	nc->conn = NULL;
}

/* libpq's message, without its trailing newline */
static char *
message(const char *text)
{
	char	   *m = pstrdup(text ? text : "");
	int			len = strlen(m);

	while (len > 0 && (m[len - 1] == '\n' || m[len - 1] == ' '))
		m[--len] = '\0';
	return m[0] ? m : "no answer";
}

/* a value of a conninfo string, quoted */
static void
append_conninfo(StringInfo buf, const char *key, const char *value)
{
	appendStringInfo(buf, "%s%s='", buf->len ? " " : "", key);
	for (const char *c = value; *c; c++)
	{
		if (*c == '\'' || *c == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, *c);
	}
	appendStringInfoChar(buf, '\'');
}

/* Connect, unless connected and idle; NULL, or why not. */
static char *
ensure_connected(NodeConnection *nc, const char *authinfo)
{
	StringInfoData info;
	const char *node_conninfo = GetConfigOption("citus.node_conninfo", true, false);
	char	   *problem;

	if (nc->conn && PQstatus(nc->conn) == CONNECTION_OK &&
		PQtransactionStatus(nc->conn) == PQTRANS_IDLE)
		return NULL;
	close_connection(nc);
	initStringInfo(&info);
	append_conninfo(&info, "host", nc->host);
	appendStringInfo(&info, " port=%d", nc->port);
	append_conninfo(&info, "dbname", get_database_name(MyDatabaseId));
	append_conninfo(&info, "user", nc->user);
	append_conninfo(&info, "application_name", "materialized_table");
	appendStringInfo(&info, " connect_timeout=%d",
					 Max(1, atoi(MT_NODE_CONNECT_TIMEOUT_MS) / 1000));
	if (node_conninfo && node_conninfo[0])
		appendStringInfo(&info, " %s", node_conninfo);
	if (authinfo && authinfo[0])
		appendStringInfo(&info, " %s", authinfo);
	nc->conn = PQconnectdb(info.data);
	if (PQstatus(nc->conn) == CONNECTION_OK)
		return NULL;
	problem = message(PQerrorMessage(nc->conn));
	close_connection(nc);
	return problem;
}

/*
 * The result of the command sent on nc, waiting as a backend waits (the
 * latch, interrupts, the postmaster's death); NULL and *problem on failure.
 */
static char *
node_result(NodeConnection *nc, char **problem)
{
	PGresult   *res;
	PGresult   *last = NULL;
	char	   *answer = NULL;

	for (;;)
	{
		while (PQisBusy(nc->conn))
		{
			(void) WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_SOCKET_READABLE | WL_EXIT_ON_PM_DEATH,
									 PQsocket(nc->conn), -1L, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (!PQconsumeInput(nc->conn))
				break;
		}
		res = PQgetResult(nc->conn);
		if (res == NULL)
			break;
		if (last)
			PQclear(last);
		last = res;
	}
	if (last && PQresultStatus(last) == PGRES_TUPLES_OK && PQntuples(last) == 1 &&
		PQnfields(last) == 1 && !PQgetisnull(last, 0, 0))
		answer = pstrdup(PQgetvalue(last, 0, 0));
	else
		*problem = message(last ? PQresultErrorMessage(last) : PQerrorMessage(nc->conn));
	if (last)
		PQclear(last);
	if (answer == NULL && PQstatus(nc->conn) != CONNECTION_OK)
		close_connection(nc);
	return answer;
}

/*
 * mt_citus_on_all_nodes
 *		Run command (a query of one value) on every node of pg_dist_node as
 *		the extension's owner: the functions the extension calls on the
 *		nodes are that role's alone.  The nodes' answers (char *, NULL for
 *		a failure), in the order of their node ids, and for the first
 *		failure *problem, naming the node.  A node that does not answer
 *		holds the caller up for MT_NODE_CONNECT_TIMEOUT_MS at most to
 *		connect.  Each call is its node's own transaction.
 */
List *
mt_citus_on_all_nodes(const char *command, char **problem)
{
	char	   *user = GetUserNameFromId(mt_extension_owner(), false);
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(user)};
	List	   *nodes = NIL;
	List	   *authinfos = NIL;
	List	   *names = NIL;
	List	   *sent = NIL;
	List	   *answers = NIL;
	ListCell   *lc;
	MemoryContext caller = CurrentMemoryContext;
	MtSavedUser saved;
	uint64		i;

	*problem = NULL;
	/* (pg_dist_authinfo is the superuser's to read) */
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	/* the role's authinfo for the node, else for all nodes, as Citus picks it */
	if (SPI_execute_with_args("SELECT n.nodeid, n.nodename, n.nodeport,"
							  "       (SELECT a.authinfo FROM pg_catalog.pg_dist_authinfo a"
							  "         WHERE a.rolename OPERATOR(pg_catalog.=) $1::pg_catalog.name"
							  "           AND a.nodeid OPERATOR(pg_catalog.=) ANY (ARRAY[n.nodeid, 0])"
							  "         ORDER BY a.nodeid DESC LIMIT 1)"
							  "  FROM pg_catalog.pg_dist_node n"
							  " WHERE n.isactive AND n.noderole OPERATOR(pg_catalog.=) 'primary'"
							  " ORDER BY n.nodeid",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the nodes of the cluster");
	for (i = 0; i < SPI_processed; i++)
	{
		TupleDesc	desc = SPI_tuptable->tupdesc;
		HeapTuple	tup = SPI_tuptable->vals[i];
		int			nodeid = atoi(SPI_getvalue(tup, desc, 1));
		char	   *host = SPI_getvalue(tup, desc, 2);
		int			port = atoi(SPI_getvalue(tup, desc, 3));
		char	   *authinfo = SPI_getvalue(tup, desc, 4);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		nodes = lappend(nodes, node_connection(nodeid, host, port, user));
		authinfos = lappend(authinfos, authinfo ? pstrdup(authinfo) : NULL);
		names = lappend(names, psprintf("%s:%d", host, port));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);

	/* (a node gone from the cluster: its connection goes) */
	foreach(lc, connections)
		if (!list_member_ptr(nodes, lfirst(lc)))
			close_connection(lfirst(lc));

	/* sent to all, then read: the nodes work at once */
	foreach(lc, nodes)
	{
		NodeConnection *nc = lfirst(lc);
		char	   *failure = ensure_connected(nc, list_nth(authinfos, foreach_current_index(lc)));

		if (failure == NULL && !PQsendQuery(nc->conn, command))
			failure = message(PQerrorMessage(nc->conn));
		if (failure && *problem == NULL)
			*problem = psprintf("node %s: %s", (char *) list_nth(names, foreach_current_index(lc)),
								failure);
		if (failure)
			close_connection(nc);
		sent = lappend_int(sent, failure == NULL);
	}
	foreach(lc, nodes)
	{
		NodeConnection *nc = lfirst(lc);
		char	   *failure = NULL;
		char	   *answer = NULL;

		if (list_nth_int(sent, foreach_current_index(lc)))
			answer = node_result(nc, &failure);
		if (failure && *problem == NULL)
			*problem = psprintf("node %s: %s", (char *) list_nth(names, foreach_current_index(lc)),
								failure);
		answers = lappend(answers, answer);
	}
	/* only the worker, which calls again and again, keeps them */
	if (!IsBackgroundWorker)
		foreach(lc, nodes)
			close_connection(lfirst(lc));
	return answers;
}
