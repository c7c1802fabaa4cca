// test/clients/clients.js: the node-postgres part of clients.sh.
//
// Both spellings from node-postgres: the Flink statements through
// materialized_table.execute() (a parameter of the extended protocol) and
// the native MATERIALIZED VIEW statements; their command tags, rows and
// error positions.  Connects with the libpq environment (PGHOST, PGPORT,
// ...).  Exits non-zero on the first check that fails.
'use strict';
const { Client } = require('pg');

const SCHEMA = 'clients_node';

function check(what, got, want) {
    if (JSON.stringify(got) !== JSON.stringify(want)) {
        console.log(`FAILED ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
        process.exit(1);
    }
}

async function expectError(client, text, params) {
    try {
        await client.query(text, params);
    } catch (e) {
        return e;
    }
    check(`error from ${text}`, 'no error', 'an error');
    return null;
}

async function main() {
    // a Unix socket directory in PGHOST is a host for node-postgres too
    const client = new Client();
    await client.connect();
    await client.query('SET client_min_messages = warning');
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await client.query('RESET client_min_messages');
    await client.query(`CREATE SCHEMA ${SCHEMA}`);
    await client.query(`CREATE TABLE ${SCHEMA}.src (id int PRIMARY KEY, g text, v int)`);
    await client.query(`INSERT INTO ${SCHEMA}.src VALUES (1, 'a', 10), (2, 'a', 5), (3, 'b', 7)`);

    // the Flink spelling, its text a parameter
    let r = await client.query('SELECT materialized_table.execute($1) AS tag',
        [`CREATE MATERIALIZED TABLE ${SCHEMA}.flink_totals FRESHNESS = INTERVAL '1' HOUR
            AS SELECT g, sum(v) AS total FROM ${SCHEMA}.src GROUP BY g`]);
    check('execute() tag', r.rows[0].tag, 'CREATE MATERIALIZED TABLE');

    // the native spelling, by the simple and the extended protocol
    r = await client.query(`CREATE MATERIALIZED VIEW ${SCHEMA}.native_totals
        WITH (materialized_table.freshness = '1 hour')
        AS SELECT g, sum(v) AS total FROM ${SCHEMA}.src GROUP BY g`);
    check('CREATE tag', r.command, 'CREATE');
    await client.query(`INSERT INTO ${SCHEMA}.src VALUES (4, 'c', 1)`);
    await client.query('SELECT materialized_table.execute($1)',
        [`ALTER MATERIALIZED TABLE ${SCHEMA}.flink_totals REFRESH`]);
    r = await client.query({ text: `REFRESH MATERIALIZED VIEW ${SCHEMA}.native_totals`, values: [] });
    check('REFRESH tag', r.command, 'REFRESH');
    const flink = await client.query(`SELECT g, total::int FROM ${SCHEMA}.flink_totals ORDER BY g`);
    const native = await client.query(`SELECT g, total::int FROM ${SCHEMA}.native_totals ORDER BY g`);
    check('rows', native.rows, flink.rows);
    check('rows', flink.rows, [{ g: 'a', total: 15 }, { g: 'b', total: 7 }, { g: 'c', total: 1 }]);

    // the statements that return rows
    r = await client.query('SELECT * FROM materialized_table.execute_query($1)',
        [`DESCRIBE ${SCHEMA}.native_totals`]);
    check('DESCRIBE columns', r.fields.map((f) => f.name),
        ['name', 'type', 'null', 'key', 'extras', 'watermark', 'comment']);
    check('DESCRIBE rows', r.rows.map((row) => [row.name, row.type]), [['g', 'text'], ['total', 'bigint']]);
    r = await client.query('SELECT name FROM materialized_table.execute_query($1)',
        [`SHOW MATERIALIZED TABLES FROM ${SCHEMA}`]);
    check('SHOW', r.rows.map((row) => row.name), ['flink_totals', 'native_totals']);

    // suspend both ways
    r = await client.query(`ALTER MATERIALIZED VIEW ${SCHEMA}.native_totals
        SET (materialized_table.refresh_status = 'suspended')`);
    check('ALTER tag', r.command, 'ALTER');
    await client.query('SELECT materialized_table.execute($1)',
        [`ALTER MATERIALIZED TABLE ${SCHEMA}.flink_totals SUSPEND`]);
    r = await client.query(`SELECT count(*)::int AS n FROM materialized_table.materialized_tables
        WHERE table_name::text LIKE $1 AND refresh_status = 'SUSPENDED'`, [`${SCHEMA}.%`]);
    check('suspended', r.rows[0].n, 2);

    // errors: a position into the native statement, under the option ...
    const nativeBad = `CREATE MATERIALIZED VIEW ${SCHEMA}.bad WITH (materialized_table.freshness = '5 hours', ` +
        "materialized_table.refresh_mode = 'full') AS SELECT 1 AS a";
    let e = await expectError(client, nativeBad);
    check('native SQLSTATE', e.code, '22023');
    check('native position', e.position, String(nativeBad.indexOf('materialized_table.freshness') + 1));
    check('native internal position', e.internalPosition, undefined);
    // ... and an internal position into execute()'s text
    const flinkBad = `CREATE MATERIALIZED TABLE ${SCHEMA}.bad FRESHNESS = INTERVAL '5' HOUR ` +
        'REFRESH_MODE = FULL AS SELECT 1 AS a';
    e = await expectError(client, 'SELECT materialized_table.execute($1)', [flinkBad]);
    check('execute() SQLSTATE', e.code, '22023');
    check('execute() internal position', e.internalPosition, String(flinkBad.indexOf('INTERVAL') + 1));
    check('execute() internal query', e.internalQuery, flinkBad);
    check('execute() position', e.position, undefined);

    // DROP both ways
    r = await client.query(`DROP MATERIALIZED VIEW ${SCHEMA}.native_totals`);
    check('DROP tag', r.command, 'DROP');
    r = await client.query('SELECT materialized_table.execute($1) AS tag',
        [`DROP MATERIALIZED TABLE ${SCHEMA}.flink_totals`]);
    check('execute() DROP tag', r.rows[0].tag, 'DROP MATERIALIZED TABLE');
    r = await client.query(`SELECT count(*)::int AS n FROM materialized_table.materialized_tables
        WHERE table_name::text LIKE $1`, [`${SCHEMA}.%`]);
    check('dropped', r.rows[0].n, 0);
    await client.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
    await client.end();
}

main().catch((err) => {
    console.log(`FAILED: ${err.stack || err}`);
    process.exit(1);
});
