/**
 * Packages used by the tests and benchmarks that ship no type declarations: they are imported
 * dynamically and cast to the small interface each caller declares next to its use.
 */
declare module 'swagger-client';
declare module 'autocannon';
