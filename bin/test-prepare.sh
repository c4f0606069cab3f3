#!/usr/bin/env bash
# Before `npm test`: fills npm's cache with what test/e2e/package.test.ts installs, so that test can
# install --offline and reach nothing past loopback. An install, like `npm ci`; a marker in
# node_modules/.cache remembers that it was done.
set -euo pipefail
cd "$(dirname "$0")/.."
# Once per Node major, package-lock.json and version of this script: npm picks, of the versions a
# range allows, the newest whose `engines` the running Node satisfies, so a new project installs
# other versions on Node 24 than on Node 20 (strip-json-comments 5.1.0 wants Node >= 22; on 20 npm
# takes 5.0.3), and a cache filled under one Node fails the --offline install under the other.
major="$(node -p 'process.versions.node.split(".")[0]')"
marker="node_modules/.cache/organism-test-npm-cache-node$major"
want="$(cat package-lock.json bin/test-prepare.sh | sha256sum | cut -d' ' -f1)"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then exit 0; fi
echo "test-prepare: filling npm's cache for the packed-package test (once per package-lock.json, on Node $major)"
warm="$(mktemp -d)"
trap 'rm -rf "$warm"' EXIT
tarball="$(npm pack --silent --ignore-scripts --pack-destination "$warm" | tail -n 1)"
# What `organism init` writes into a new project besides organism, at this package's own versions:
# the dev tools, and esbuild (organism's optional peer, which init makes a dependency). Without
# esbuild here its platform package (@esbuild/linux-x64) is not in the cache, an --offline install
# leaves that optional package out without a word, and the project's .ts listeners do not load.
# zod: the hello listener's schemas (a dependency of the init project).
dev_tools="$(node -p 'const d = require("./package.json").devDependencies; ["typescript", "vitest", "@types/node", "esbuild", "zod"].map((n) => n + "@" + d[n]).join(" ")')"
(cd "$warm" && npm init -y >/dev/null && npm install "./$tarball" $dev_tools --no-audit --no-fund >/dev/null)
mkdir -p "$(dirname "$marker")"
echo "$want" > "$marker"
