-- SPDX-License-Identifier: MIT
-- The sqlite3 workload `make bench` records (scripts/trace_bench.sh): a
-- table filled by a recursive query, an index built over it, then grouped
-- and joined queries -- insert, index, query, the shape of most uses.
PRAGMA cache_size = -8000;
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO item(name, grp, price)
SELECT printf('item-%d-%s', i, hex(randomblob(8))), i % 97, (i * 7919) % 1000 / 10.0 FROM n;
CREATE INDEX item_grp ON item(grp, price);
CREATE INDEX item_name ON item(name);
SELECT grp, count(*), avg(price) FROM item GROUP BY grp ORDER BY 3 DESC LIMIT 3;
SELECT count(*) FROM item a JOIN item b ON a.grp = b.grp AND b.id = a.id + 97 WHERE a.price > 50;
DELETE FROM item WHERE id % 3 = 0;
SELECT count(DISTINCT substr(name, 1, 9)) FROM item;
