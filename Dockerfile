# Production image for the API, the Temporal workers and the operator CLI (one image, different commands).
# Postgres and Temporal are external here (see docker-compose.yml), so no bootstrap/tools are needed.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lockfile lacks non-Linux optional binaries (our registry does not serve them), which makes
# `npm ci` reject it; `npm install` then still installs what the lockfile pins.
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY . .
RUN node_modules/.bin/tsc -p tsconfig.json && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app ./
USER node
EXPOSE 3000
CMD ["node", "dist/src/entry/server.js"]
