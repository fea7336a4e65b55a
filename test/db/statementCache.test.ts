import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StatementCache } from '../../src/db/statementCache';

describe('StatementCache', () => {
  const db = new Database(':memory:');
  afterEach(() => db.exec('DROP TABLE IF EXISTS t'));

  it('prepares each SQL text once and hands the same statement back', () => {
    db.exec('CREATE TABLE t (x INTEGER)');
    const cache = new StatementCache(db);
    const insert = cache.get('INSERT INTO t (x) VALUES (?)');
    expect(cache.get('INSERT INTO t (x) VALUES (?)')).toBe(insert);
    insert.run(1);
    cache.get('INSERT INTO t (x) VALUES (?)').run(2);
    expect(cache.get('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1, 2]);
  });

  it('starts over past its limit instead of growing', () => {
    const cache = new StatementCache(db, 2);
    const first = cache.get('SELECT 1');
    cache.get('SELECT 2');
    expect(cache.get('SELECT 1')).toBe(first);
    cache.get('SELECT 3');
    expect(cache.get('SELECT 1')).not.toBe(first);
    expect(cache.get('SELECT 1').pluck().get()).toBe(1);
  });

  it('still fails clearly for SQL that does not prepare', () => {
    const cache = new StatementCache(db);
    expect(() => cache.get('SELECT * FROM missing_table')).toThrow(/no such table/);
  });
});
