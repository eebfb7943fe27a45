#!/bin/sh
# Rebuild dist/ (committed, so installing the app needs no npm): the bundle, its style sheet and the
# highlighting style of the stage panes. Needs node 18+ and npm, once: `sh build.sh`.
set -e
cd "$(dirname "$0")"
npm ci --no-audit --no-fund 2>/dev/null || npm install --no-audit --no-fund
npx esbuild src/workbench.js --bundle --minify --format=iife --target=es2020 --legal-comments=eof --outfile=dist/workbench.js
cp src/workbench.css dist/workbench.css
python3 -c "import sys; sys.path.insert(0, '../../..'); from inspector.highlight import stylesheet; print(stylesheet('.hl'))" > dist/highlight.css
