/**
 * Rights of keys across versions: a key made with every right is stored as `all` and reaches the
 * families added later (metrics, symbols); a key file written when keys listed their rights has
 * its all-rights keys given `all` once, while restricted keys stay restricted.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyStore, parseRights, RIGHTS } from '../../src/http/keys.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('xrate-key-rights-');
afterAll(() => tmp.remove());

describe('key rights', () => {
  it('a key with every right is stored as all; a restricted one as its list', () => {
    const keys = KeyStore.open(join(tmp.dir, 'new.sqlite'));
    const every = keys.create({ name: 'every' });
    const five = keys.create({ name: 'five', rights: parseRights('rate,rates,periods,history,explain') });
    expect([...every.record.rights]).toEqual([...RIGHTS]);
    expect([...five.record.rights].sort()).toEqual(['explain', 'history', 'periods', 'rate', 'rates']);
    expect(keys.list().map((k) => k.rights)).toEqual(['all', 'rate,rates,periods,history,explain']);
    keys.close();
    // Opened again: the restricted key made after the migration stays restricted.
    const again = KeyStore.open(join(tmp.dir, 'new.sqlite'));
    expect(again.find(five.key)?.rights.has('metrics')).toBe(false);
    expect(again.find(every.key)?.rights.has('symbols')).toBe(true);
    again.close();
  });

  it('a key file of the version that listed rights: all-rights keys get all, once', () => {
    const path = join(tmp.dir, 'old.sqlite');
    const keys = KeyStore.open(path);
    const old = keys.create({ name: 'old all' });
    const limited = keys.create({ name: 'old limited', rights: parseRights('rate,history') });
    keys.close();
    // As the version before wrote them: the five rights of that time, and no migration record.
    const db = new Database(path);
    db.prepare(`UPDATE api_keys SET rights = 'rate,rates,periods,history,explain' WHERE name = 'old all'`).run();
    db.exec('DROP TABLE api_key_meta');
    db.close();
    const reopened = KeyStore.open(path);
    expect(reopened.find(old.key)?.rights.has('metrics')).toBe(true);
    expect(reopened.find(old.key)?.rights.has('symbols')).toBe(true);
    expect([...(reopened.find(limited.key)?.rights ?? [])]).toEqual(['rate', 'history']);
    reopened.close();
  });
});
