# Production image for the API, the Temporal workers and the operator CLI (one image, different commands).
# Postgres and Temporal are external (see docker-compose.yml). Node 22 LTS: Node 20 reached end of life in April 2026.
FROM node:22-bookworm-slim AS build
WORKDIR /app
# pip fetches the first-name data set (PyPI gender-guesser, pinned in scripts/tool-versions.json) that customer reads
# need: the bootstrap installs it for `npm start`, the image must carry it too.
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# The lockfile lacks non-Linux optional binaries (our registry does not serve them), which makes
# `npm ci` reject it; `npm install` then still installs what the lockfile pins.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY . .
RUN node -e "const v=require('./scripts/tool-versions.json').nameData; console.log(v.pypi+'=='+v.version+' '+v.dir)" > /tmp/names \
 && read spec dir < /tmp/names \
 && pip3 install --quiet --break-system-packages --no-deps --target "$dir" "$spec" \
 && node -e "const v=require('./scripts/tool-versions.json').nameData; require('fs').statSync(v.dir+'/'+v.file)"
RUN node_modules/.bin/tsc -p tsconfig.json && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app ./
USER node
EXPOSE 3000
CMD ["node", "dist/src/entry/server.js"]
