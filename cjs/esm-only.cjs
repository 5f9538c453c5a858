// What `require('xrate')` (and `require('xrate/replay')`, `require('xrate/service')`) load: xrate
// is published as ES modules only, so this says how to load it instead of failing on a path.
'use strict';

const error = new Error(
  'xrate is an ES module package: it cannot be loaded with require(). ' +
    "In an ES module: import { createEngine } from 'xrate'; " +
    "from CommonJS: const { createEngine } = await import('xrate') " +
    "(the same for 'xrate/replay' and 'xrate/service').",
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
