-- SPDX-License-Identifier: MIT
-- bench/workloads/sqlite.sql -- the sqlite3 workload of scripts/workloads.py
-- (docs/MALLOC.md, "Workloads"), run as `sqlite3 -cmd ".parameter set @rows
-- 200000" :memory: < sqlite.sql` (--quick: 20000 rows):
-- an in-memory database (every page a malloc'd block), rows inserted by a
-- recursive query, two indexes built, grouped, joined and sorted queries,
-- an update and a delete that rewrite the indexes. Deterministic (no
-- random()): the output is the same under every allocator.
PRAGMA cache_size = -32000;
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, v REAL, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @rows)
INSERT INTO t(name, grp, v, note)
SELECT printf('name-%08d', (i * 2654435761) % 1000003), i % 211, (i * 7919) % 10007 / 7.0,
       substr('abcdefghijklmnopqrstuvwxyz', 1 + i % 26) || printf('%d', i * i % 9973)
FROM n;
CREATE INDEX t_grp ON t(grp, v);
CREATE INDEX t_name ON t(name);
SELECT grp, count(*), round(avg(v), 3) FROM t GROUP BY grp ORDER BY 3 DESC, 1 LIMIT 3;
SELECT count(*) FROM t a JOIN t b ON a.grp = b.grp AND b.id = a.id + 211 WHERE a.v > 700;
UPDATE t SET note = note || name, v = v + 1 WHERE id % 5 = 0;
DELETE FROM t WHERE id % 3 = 0;
SELECT count(DISTINCT substr(name, 1, 9)), max(length(note)) FROM t;
SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY note, name LIMIT 5);
