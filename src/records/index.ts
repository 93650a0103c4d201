/** The domain: record types, statuses, codes and money helpers every platform adapter and module shares. Pure, no I/O. */
export * from './codes.js';
export * from './money.js';
export * from './statuses.js';
export * from './types.js';
