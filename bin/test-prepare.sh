#!/usr/bin/env bash
# Before `npm test`: fills npm's cache with what test/e2e/package.test.ts installs, so that test can
# install --offline and reach nothing past loopback. An install, like `npm ci`, and done once per
# package-lock.json (a marker in node_modules/.cache remembers it).
set -euo pipefail
cd "$(dirname "$0")/.."
marker=node_modules/.cache/organism-test-npm-cache
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then exit 0; fi
echo "test-prepare: filling npm's cache for the packed-package test (once per package-lock.json)"
warm="$(mktemp -d)"
trap 'rm -rf "$warm"' EXIT
tarball="$(npm pack --silent --ignore-scripts --pack-destination "$warm" | tail -n 1)"
# The dev tools `organism init` writes into a new project, at this package's own versions.
dev_tools="$(node -p 'const d = require("./package.json").devDependencies; ["typescript", "vitest", "@types/node"].map((n) => n + "@" + d[n]).join(" ")')"
(cd "$warm" && npm init -y >/dev/null && npm install "./$tarball" $dev_tools --no-audit --no-fund >/dev/null)
mkdir -p "$(dirname "$marker")"
echo "$want" > "$marker"
