#!/bin/sh
# Set up this repository on a fresh machine, then run one root script:
#   sh scripts/dev.sh demo    sh scripts/dev.sh test    sh scripts/dev.sh bench
# Installs the pinned pnpm when it is missing, then the workspace's dependencies.
set -eu
cd "$(dirname "$0")/.."

PNPM_VERSION=12.4.2
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  if [ -x .tools/node_modules/.bin/pnpm ]; then
    :
  elif ! npm install --global "pnpm@$PNPM_VERSION" >/dev/null 2>&1; then
    # No permission for a global install: keep pnpm inside the repository.
    npm install --prefix .tools "pnpm@$PNPM_VERSION" >/dev/null
  fi
  if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
    PATH="$PWD/.tools/node_modules/.bin:$PATH"
    export PATH
  fi
fi

# better-sqlite3 compiles from source where its prebuilt binary cannot be
# downloaded, and node-gyp then needs Node's headers (pnpm reads only the
# environment variable, not .npmrc).
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then
  npm_config_nodedir=/usr
  export npm_config_nodedir
fi

pnpm install --frozen-lockfile
exec pnpm "$@"
