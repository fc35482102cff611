import { describe, expect, it } from 'vitest';

import { DatabaseDeadlineError, databaseFault } from './db-errors.js';

describe('databaseFault', () => {
  it('names the storage and connection faults by SQLSTATE, socket code and driver code', () => {
    expect(databaseFault(Object.assign(new Error('could not extend file'), { code: '53100' }))).toBe('disk_full');
    expect(databaseFault({ code: '53300' })).toBe('too_many_connections');
    expect(databaseFault({ code: '53200' })).toBe('out_of_resources');
    expect(databaseFault({ code: '25006' })).toBe('read_only');
    expect(databaseFault({ code: '57P01' })).toBe('shutdown');
    expect(databaseFault({ code: '08006' })).toBe('connection');
    expect(databaseFault({ code: '58P01' })).toBe('io_error');
    expect(databaseFault({ code: 'ECONNRESET' })).toBe('connection');
    expect(databaseFault({ code: 'CONNECTION_CLOSED' })).toBe('connection');
    expect(databaseFault(new DatabaseDeadlineError(5000))).toBe('deadline');
    expect(databaseFault({ name: 'ErrnoError', errno: 28 })).toBe('disk_full');
    expect(databaseFault(new Error('Connection terminated unexpectedly'))).toBe('connection');
    expect(databaseFault(new Error('Client has encountered a connection error and is not queryable'))).toBe(
      'connection',
    );
    expect(databaseFault(new Error('Client was closed and is not queryable'))).toBe('connection');
    expect(databaseFault(new Error('timeout exceeded when trying to connect'))).toBe('deadline');
    expect(databaseFault(new Error('outer', { cause: { code: '53100' } }))).toBe('disk_full');
  });

  it('leaves bugs, constraint violations and bad input alone', () => {
    expect(databaseFault(new Error('boom'))).toBeNull();
    expect(databaseFault({ code: '23505' })).toBeNull(); // unique_violation
    expect(databaseFault({ code: '22P05' })).toBeNull(); // untranslatable_character: an input problem
    expect(databaseFault({ code: '40001' })).toBeNull(); // serialization: retried where it happens
    expect(databaseFault(null)).toBeNull();
    expect(databaseFault('ECONNRESET')).toBeNull();
  });
});
