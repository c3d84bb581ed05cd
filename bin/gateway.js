#!/usr/bin/env node
'use strict';
// The admin CLI. Builds first when dist/ is missing (fresh clone), then runs it.
const fs = require('node:fs');
const path = require('node:path');
const root = path.resolve(__dirname, '..');
const compiled = path.join(root, 'dist', 'cli', 'gateway.js');
if (!fs.existsSync(compiled)) {
  const { ensureDependencies, build } = require(path.join(root, 'scripts', 'bootstrap.js'));
  ensureDependencies();
  build();
}
require(compiled);
