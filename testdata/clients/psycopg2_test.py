"""psycopg2 against streamsql, run by engine/clients_test.go with the DSN as argv[1].

Each check raises on a wrong result; the script prints "ok" at the end.
"""
import io
import sys

import psycopg2
import psycopg2.errors
import psycopg2.extras


def rows(cur, sql, args=None):
    cur.execute(sql, args)
    return cur.fetchall()


def main(dsn):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(10,2), tags text[])")
    cur.execute("CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS n, sum(price) AS total FROM items")
    # psycopg2 interpolates parameters on the client.
    cur.executemany("INSERT INTO items VALUES (%s, %s, %s, %s)",
                    [(1, "apple", "1.25", ["fruit"]), (2, "bread", "3.50", []), (3, "o'clock", None, None)])
    got = rows(cur, "SELECT id, name, price, tags FROM items ORDER BY id")
    want = [(1, "apple", __import__("decimal").Decimal("1.25"), ["fruit"]),
            (2, "bread", __import__("decimal").Decimal("3.50"), []),
            (3, "o'clock", None, None)]
    assert got == want, got
    cur.execute("UPDATE items SET price = price * 2 WHERE id = %(id)s", {"id": 2})
    assert cur.rowcount == 1, cur.rowcount
    cur.execute("DELETE FROM items WHERE id = 3")
    cur.execute("FLUSH")
    assert rows(cur, "SELECT n, total FROM totals") == [(2, __import__("decimal").Decimal("8.25"))]

    # Errors carry their SQLSTATE.
    try:
        cur.execute("INSERT INTO items VALUES (1, 'dup', 0, NULL)")
        raise AssertionError("duplicate key accepted")
    except psycopg2.errors.UniqueViolation as e:
        assert e.pgcode == "23505", e.pgcode
    try:
        cur.execute("SELECT * FROM nope")
        raise AssertionError("unknown table accepted")
    except psycopg2.errors.UndefinedTable:
        pass

    # copy_expert in both directions.
    cur.copy_expert("COPY items (id, name, price) FROM STDIN WITH (FORMAT csv)",
                    io.StringIO("10,ten,10.00\n11,eleven,11.00\n"))
    out = io.StringIO()
    cur.copy_expert("COPY (SELECT id, name FROM items WHERE id >= 10 ORDER BY id) TO STDOUT WITH (FORMAT csv)", out)
    assert out.getvalue() == "10,ten\n11,eleven\n", out.getvalue()

    # DictCursor reads column names from the row description.
    dcur = conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor)
    dcur.execute("SELECT id, name FROM items WHERE id = 1")
    assert dcur.fetchone() == {"id": 1, "name": "apple"}

    # Without autocommit psycopg2 wraps statements in BEGIN ... COMMIT.
    tx = psycopg2.connect(dsn)
    tcur = tx.cursor()
    tcur.execute("INSERT INTO items VALUES (20, 'twenty', 20, NULL)")
    tx.commit()
    assert rows(cur, "SELECT name FROM items WHERE id = 20") == [("twenty",)]
    # rollback() undoes the block's writes.
    tcur.execute("INSERT INTO items VALUES (21, 'gone', 21, NULL)")
    tcur.execute("UPDATE items SET name = 'changed' WHERE id = 20")
    assert rows(tcur, "SELECT name FROM items WHERE id IN (20, 21) ORDER BY id") == [("changed",), ("gone",)]
    tx.rollback()
    assert rows(cur, "SELECT name FROM items WHERE id IN (20, 21) ORDER BY id") == [("twenty",)]
    # An error aborts the block until rollback.
    try:
        tcur.execute("INSERT INTO items VALUES (20, 'dup', 0, NULL)")
        raise AssertionError("duplicate key accepted")
    except psycopg2.errors.UniqueViolation:
        pass
    try:
        tcur.execute("SELECT 1")
        raise AssertionError("statement ran in an aborted block")
    except psycopg2.errors.InFailedSqlTransaction:
        pass
    tx.rollback()
    assert rows(tcur, "SELECT count(*) FROM items") == [(5,)]
    # A named cursor is a server-side cursor (DECLARE, then FETCH in parts).
    named = tx.cursor(name="items_by_id")
    named.itersize = 2
    named.execute("SELECT id FROM items ORDER BY id")
    assert [r[0] for r in named] == [1, 2, 10, 11, 20], "named cursor"
    named.close()
    tx.commit()
    tx.close()
    conn.close()
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
