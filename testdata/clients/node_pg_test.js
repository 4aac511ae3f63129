// node-postgres against streamsql, run by engine/clients_test.go with the
// connection string as the first argument. Each check throws on a wrong
// result; the script prints "ok" at the end.
'use strict';
const assert = require('assert');
const { Client, Pool } = require('pg');

async function main(url) {
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query('CREATE TABLE events (id bigint PRIMARY KEY, kind text, amount double precision, at timestamptz)');
  await c.query('CREATE MATERIALIZED VIEW by_kind AS SELECT kind, count(*) AS n, sum(amount) AS total FROM events GROUP BY kind');
  // Parameters go through the extended protocol.
  for (const [id, kind, amount] of [[1, 'a', 1.5], [2, 'b', 2], [3, 'a', 3]]) {
    await c.query('INSERT INTO events VALUES ($1, $2, $3, $4)', [id, kind, amount, new Date(Date.UTC(2026, 0, id))]);
  }
  let r = await c.query('SELECT id, kind, amount, at FROM events WHERE id = $1', [1]);
  assert.deepStrictEqual(r.rows[0].kind, 'a');
  assert.strictEqual(r.rows[0].amount, 1.5);
  assert.strictEqual(r.rows[0].at.toISOString(), '2026-01-01T00:00:00.000Z');
  assert.strictEqual(r.rows[0].id, '1'); // bigint comes back as a string
  r = await c.query('UPDATE events SET amount = amount + $1 WHERE kind = $2', [10, 'a']);
  assert.strictEqual(r.rowCount, 2);
  await c.query('FLUSH');
  r = await c.query('SELECT kind, n, total FROM by_kind ORDER BY kind');
  assert.deepStrictEqual(r.rows.map((x) => [x.kind, x.n, x.total]), [['a', '2', 24.5], ['b', '1', 2]]);

  // Errors carry their SQLSTATE and position.
  await assert.rejects(c.query('INSERT INTO events VALUES (1, $1, 0, now())', ['dup']), (e) => e.code === '23505');
  await assert.rejects(c.query('SELECT nocolumn FROM events'), (e) => e.code === '42703' && e.position === '8');

  // Prepared statements by name, executed twice.
  const q = { name: 'by-id', text: 'SELECT kind FROM events WHERE id = $1' };
  assert.strictEqual((await c.query({ ...q, values: [2] })).rows[0].kind, 'b');
  assert.strictEqual((await c.query({ ...q, values: [3] })).rows[0].kind, 'a');

  // Transactions: ROLLBACK undoes, COMMIT applies both writes together.
  await c.query('BEGIN');
  await c.query('INSERT INTO events VALUES ($1, $2, $3, now())', [50, 'tx', 1]);
  await c.query('ROLLBACK');
  assert.strictEqual((await c.query('SELECT count(*) AS n FROM events WHERE id = 50')).rows[0].n, '0');
  await c.query('BEGIN');
  await c.query('INSERT INTO events VALUES ($1, $2, $3, now())', [50, 'tx', 1]);
  await c.query('INSERT INTO events VALUES ($1, $2, $3, now())', [51, 'tx', 2]);
  await assert.rejects(c.query('INSERT INTO events VALUES (1, $1, 0, now())', ['dup']), (e) => e.code === '23505');
  await assert.rejects(c.query('SELECT 1'), (e) => e.code === '25P02');
  await c.query('ROLLBACK');
  await c.query('BEGIN');
  await c.query('INSERT INTO events VALUES ($1, $2, $3, now())', [50, 'tx', 1]);
  await c.query('INSERT INTO events VALUES ($1, $2, $3, now())', [51, 'tx', 2]);
  await c.query('COMMIT');
  await c.query('FLUSH');
  r = await c.query("SELECT n, total FROM by_kind WHERE kind = 'tx'");
  assert.deepStrictEqual([r.rows[0].n, r.rows[0].total], ['2', 3]);

  // A pool of connections writing at once.
  const pool = new Pool({ connectionString: url, max: 4 });
  await Promise.all(Array.from({ length: 20 }, (_, i) =>
    pool.query('INSERT INTO events VALUES ($1, $2, $3, now())', [100 + i, 'p', i])));
  await pool.end();
  await c.query('FLUSH');
  r = await c.query("SELECT n FROM by_kind WHERE kind = 'p'");
  assert.strictEqual(r.rows[0].n, '20');
  await c.end();
  console.log('ok');
}

main(process.argv[2]).catch((e) => { console.error(e); process.exit(1); });
